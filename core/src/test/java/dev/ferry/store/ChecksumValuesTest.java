package dev.ferry.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The checksum and part-size values as S3 computes and ferry keeps them. The composite's expected value is the
 * one s3proxy 4.1 (and the AWS SDKs' definition) gives the same two parts: {@code crc32(crc32(part1) ||
 * crc32(part2))}, base64, then {@code -2}.
 */
class ChecksumValuesTest {
    private static byte[] filled(int n, char c) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) c);
        return b;
    }

    private static Checksum of(Checksum.Algorithm a, byte[] bytes) {
        Checksum.Digest d = a.digest();
        d.update(bytes, 0, bytes.length);
        return Checksum.full(a, d.finish());
    }

    @Test
    void fullObject_matchesKnownValues() {
        byte[] hello = "hello".getBytes(StandardCharsets.UTF_8);
        assertThat(of(Checksum.Algorithm.CRC32, hello).value()).isEqualTo("NhCmhg==");
        assertThat(of(Checksum.Algorithm.SHA256, hello).value()).isEqualTo("LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=");
        assertThat(of(Checksum.Algorithm.CRC64NVME, "123456789".getBytes(StandardCharsets.US_ASCII)).raw())
                .isEqualTo(new byte[] {(byte) 0xAE, (byte) 0x8B, 0x14, (byte) 0x86, 0x0A, 0x79, (byte) 0x98, (byte) 0x88});
    }

    @Test
    void composite_isTheChecksumOfThePartsChecksums_thenTheirCount() {
        Checksum one = of(Checksum.Algorithm.CRC32, filled(5 << 20, 'x'));
        Checksum two = of(Checksum.Algorithm.CRC32, filled(100, 'y'));
        assertThat(one.value()).isEqualTo("BwQzxA==");
        Checksum composite = Checksum.composite(Checksum.Algorithm.CRC32, List.of(one, two));
        assertThat(composite.value()).isEqualTo("Fqvr3w==-2");
        assertThat(composite.type()).isEqualTo(Checksum.Type.COMPOSITE);
        assertThat(composite.raw()).hasSize(4);
    }

    @Test
    void attributes_keepTheChecksumOrTheDeclaration_andNeverBoth() {
        ObjectAttributes user = new ObjectAttributes(Map.of("x-amz-meta-run", "7"));
        Checksum declared = Checksum.declared(Checksum.Algorithm.SHA256, Checksum.Type.COMPOSITE);
        ObjectAttributes started = declared.applyTo(user);
        assertThat(Checksum.declaredIn(started)).isEqualTo(declared);
        assertThat(Checksum.of(started)).isNull();
        Checksum done = new Checksum(Checksum.Algorithm.SHA256, Checksum.Type.COMPOSITE, "AAAA-3");
        ObjectAttributes completed = done.applyTo(started);
        assertThat(Checksum.of(completed)).isEqualTo(done);
        assertThat(Checksum.declaredIn(completed)).as("the declaration goes once there is a value").isNull();
        assertThat(Checksum.strip(completed)).isEqualTo(user);
        assertThat(ObjectAttributes.isObjectHeader("x-amz-checksum-sha256")).as("never served as an ordinary header").isFalse();
    }

    @Test
    void partSizes_roundTripRunLengthEncoded_andPlaceEachPart() {
        Random random = new Random(3);
        for (int round = 0; round < 200; round++) {
            int n = 1 + random.nextInt(40);
            List<Long> sizes = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                sizes.add(random.nextInt(3) == 0 ? 1L + random.nextInt(1000) : 5L << 20);
            }
            ObjectAttributes kept = Parts.applyTo(ObjectAttributes.NONE, sizes, null);
            assertThat(Parts.sizes(kept)).isEqualTo(sizes);
            long offset = 0;
            for (int p = 1; p <= n; p++) {
                ByteRange r = Parts.range(sizes, p);
                assertThat(r.offset()).isEqualTo(offset);
                assertThat(r.length()).isEqualTo(sizes.get(p - 1));
                offset += sizes.get(p - 1);
            }
            assertThat(Parts.range(sizes, n + 1)).isNull();
        }
        assertThat(Parts.applyTo(ObjectAttributes.NONE, List.of(5L << 20, 5L << 20, 5L << 20, 7L), null).get(Parts.SIZES))
                .isEqualTo("5242880*3,7");
        Checksum one = of(Checksum.Algorithm.CRC32, filled(1, 'a'));
        Checksum two = of(Checksum.Algorithm.CRC32, filled(1, 'b'));
        ObjectAttributes withSums = Parts.applyTo(Checksum.composite(Checksum.Algorithm.CRC32, List.of(one, two)).applyTo(ObjectAttributes.NONE),
                List.of(1L, 1L), List.of(one, two));
        assertThat(Parts.checksums(withSums)).containsExactly(one, two);
        assertThat(Parts.strip(withSums)).isEqualTo(Checksum.composite(Checksum.Algorithm.CRC32, List.of(one, two)).applyTo(ObjectAttributes.NONE));
    }
}
