package dev.ferry.decoded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DecodedSamplesTest {
    @TempDir
    Path dir;

    private static DecodedKey key(String etag, long offset, String version) {
        return new DecodedKey("data", "train/shard-0.tar", etag, offset, 100, version);
    }

    private static byte[] value(int n, int fill) {
        byte[] b = new byte[n];
        java.util.Arrays.fill(b, (byte) fill);
        return b;
    }

    private Path onlyFile() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).findFirst().orElseThrow();
        }
    }

    @Test
    void aStoredDecodeIsReadBackWithItsDecodeTime() throws IOException {
        DecodedSamples s = new DecodedSamples(dir, 1 << 20);
        assertThat(s.put(key("e1", 0, "m.decode:v1"), value(1000, 7), 0.004, 10)).isTrue();
        DecodedSamples.Hit hit = s.get(key("e1", 0, "m.decode:v1"), 20);
        assertThat(hit.value()).isEqualTo(value(1000, 7));
        assertThat(hit.decodeSeconds()).isEqualTo(0.004);
        assertThat(s.stats().hits()).isEqualTo(1);
        assertThat(s.stats().usedBytes()).isEqualTo(Files.size(onlyFile()));
    }

    @Test
    void anotherVersionEtagOrSampleIsAMiss() throws IOException {
        DecodedSamples s = new DecodedSamples(dir, 1 << 20);
        s.put(key("e1", 0, "m.decode:v1"), value(100, 1), 0.001, 1);
        assertThat(s.get(key("e1", 0, "m.decode:v2"), 1)).isNull();
        assertThat(s.get(key("e2", 0, "m.decode:v1"), 1)).isNull();
        assertThat(s.get(key("e1", 100, "m.decode:v1"), 1)).isNull();
        assertThat(s.stats().misses()).isEqualTo(3);
        assertThat(s.get(key("e1", 0, "m.decode:v1"), 1)).isNotNull();
    }

    @Test
    void aFlippedByteIsAMissAndTheEntryGoes() throws IOException {
        DecodedSamples s = new DecodedSamples(dir, 1 << 20);
        DecodedKey k = key("e1", 0, "v1");
        s.put(k, value(4096, 3), 0.001, 1);
        Path f = onlyFile();
        try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
            raf.seek(raf.length() - 100);
            int b = raf.read();
            raf.seek(raf.length() - 100);
            raf.write(b ^ 0x10);
        }
        assertThat(s.get(k, 1)).isNull();
        assertThat(s.stats().corrupt()).isEqualTo(1);
        assertThat(s.holds(k)).isFalse();
        assertThat(Files.exists(f)).isFalse();
        assertThat(s.stats().usedBytes()).isZero();
    }

    @Test
    void aFileHoldingAnotherKeyIsNotServed() throws IOException {
        DecodedSamples s = new DecodedSamples(dir, 1 << 20);
        DecodedKey a = key("e1", 0, "v1");
        DecodedKey b = key("e1", 100, "v1");
        s.put(a, value(10, 1), 0, 1);
        s.put(b, value(10, 2), 0, 1);
        // a's file replaced by b's, whole and with a good checksum
        Path fa = dir.resolve(a.id().substring(0, 2)).resolve(a.id());
        Path fb = dir.resolve(b.id().substring(0, 2)).resolve(b.id());
        Files.copy(fb, fa, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(s.get(a, 1)).isNull();
        assertThat(s.get(b, 1).value()).isEqualTo(value(10, 2));
    }

    @Test
    void whenFullASampleUsedSoonerTakesTheRoomOfTheFarthestAndOneUsedLaterIsRefused() throws IOException {
        long one = DecodedSamples.encode(key("e", 600, "v"), value(1000, 0), 0).length;
        DecodedSamples s = new DecodedSamples(dir, 3 * one);
        assertThat(s.put(key("e", 600, "v"), value(1000, 0), 0, 30)).isTrue();
        assertThat(s.put(key("e", 100, "v"), value(1000, 0), 0, 10)).isTrue();
        assertThat(s.put(key("e", 200, "v"), value(1000, 0), 0, 20)).isTrue();
        // full: one used at 40, after all three, is refused
        assertThat(s.put(key("e", 300, "v"), value(1000, 0), 0, 40)).isFalse();
        assertThat(s.stats().refused()).isEqualTo(1);
        // one used at 5 takes the place of the one used at 30
        assertThat(s.put(key("e", 400, "v"), value(1000, 0), 0, 5)).isTrue();
        assertThat(s.holds(key("e", 600, "v"))).isFalse();
        assertThat(s.holds(key("e", 100, "v"))).isTrue();
        assertThat(s.stats().evicted()).isEqualTo(1);
        // a read moves an entry's next use: the one at 10, read and next used at 50, is the next to leave
        s.get(key("e", 100, "v"), 50);
        assertThat(s.put(key("e", 500, "v"), value(1000, 0), 0, 25)).isTrue();
        assertThat(s.holds(key("e", 100, "v"))).isFalse();
        assertThat(s.stats().usedBytes()).isEqualTo(3 * one);
    }

    @Test
    void aSmallerQuotaEvictsTheFarthestAndAZeroQuotaHoldsNothing() throws IOException {
        DecodedSamples s = new DecodedSamples(dir, 1 << 20);
        for (int i = 0; i < 4; i++) {
            s.put(key("e", i * 100L, "v"), value(1000, i), 0, i);
        }
        long one = s.stats().usedBytes() / 4;
        s.quota(2 * one);
        assertThat(s.holds(key("e", 0, "v"))).isTrue();
        assertThat(s.holds(key("e", 100, "v"))).isTrue();
        assertThat(s.holds(key("e", 300, "v"))).isFalse();
        s.quota(0);
        assertThat(s.stats().entries()).isZero();
        assertThat(s.put(key("e", 0, "v"), value(10, 0), 0, 0)).isFalse();
        try (Stream<Path> files = Files.walk(dir)) {
            assertThat(files.filter(Files::isRegularFile)).isEmpty();
        }
    }

    @Test
    void entriesOnDiskAreFoundAtStartAndAPartialWriteIsDeleted() throws IOException {
        DecodedSamples s = new DecodedSamples(dir, 1 << 20);
        DecodedKey k = key("e1", 0, "v1");
        s.put(k, value(500, 9), 0.002, 1);
        Path stray = onlyFile().resolveSibling(k.id() + ".tmp7");
        Files.write(stray, "half".getBytes(StandardCharsets.UTF_8));
        DecodedSamples again = new DecodedSamples(dir, 1 << 20);
        assertThat(again.get(k, 1).value()).isEqualTo(value(500, 9));
        assertThat(Files.exists(stray)).isFalse();
        assertThat(again.stats().usedBytes()).isEqualTo(s.stats().usedBytes());
    }

    @Test
    void aStaleEntryIsDroppedAndCounted() throws IOException {
        DecodedSamples s = new DecodedSamples(dir, 1 << 20);
        DecodedKey k = key("e1", 0, "v1");
        s.put(k, value(10, 1), 0, 1);
        assertThat(s.dropStale(k)).isTrue();
        assertThat(s.get(k, 1)).isNull();
        assertThat(s.stats().stale()).isEqualTo(1);
    }

    @Test
    void aKeyNeedsEveryField() {
        assertThatThrownBy(() -> new DecodedKey("b", "k", "", 0, 1, "v")).hasMessage("a decoded sample's etag is missing");
        assertThatThrownBy(() -> new DecodedKey("b", "k", "e", -1, 1, "v"))
                .hasMessage("a decoded sample's offset and length must be at least 0, not -1 and 1");
    }
}
