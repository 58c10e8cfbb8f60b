package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.Crc64Nvme;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.S3Exception;

/** CRC-64/NVME and SHA-1 body checksums: computed as S3 does, verified on PUT by the daemon. */
class Crc64NvmeTest {
    @Test
    void checkValue_ofTheStandardString() {
        Crc64Nvme c = new Crc64Nvme();
        byte[] nine = "123456789".getBytes(StandardCharsets.US_ASCII);
        c.update(nine, 0, nine.length);
        assertThat(c.getValue()).isEqualTo(0xAE8B14860A799888L);
        c.reset();
        for (byte b : nine) {
            c.update(b);
        }
        assertThat(c.getValue()).isEqualTo(0xAE8B14860A799888L);
    }

    @Test
    void theSdksCrc64NvmeAndSha1Puts_areVerified_andAWrongOneIsBadDigest(@TempDir Path dir) throws Exception {
        byte[] data = new byte[3 * 1024 * 1024 + 17];
        new Random(7).nextBytes(data);
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            // the SDK computes CRC-64/NVME itself only with the CRT on its classpath: the value is given, as a client computing it would
            Crc64Nvme c = new Crc64Nvme();
            c.update(data, 0, data.length);
            String crc64 = Base64.getEncoder().encodeToString(java.nio.ByteBuffer.allocate(8).putLong(c.getValue()).array());
            s3.putObject(b -> b.bucket("data").key("c-crc64").checksumCRC64NVME(crc64), RequestBody.fromBytes(data));
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("c-crc64")).asByteArray()).isEqualTo(data);
            s3.putObject(b -> b.bucket("data").key("c-sha1").checksumAlgorithm(ChecksumAlgorithm.SHA1), RequestBody.fromBytes(data));
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("c-sha1")).asByteArray()).isEqualTo(data);
            String wrong = Base64.getEncoder().encodeToString(new byte[8]);
            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("data").key("bad").checksumCRC64NVME(wrong), RequestBody.fromBytes(data)))
                    .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("BadDigest"));
            assertThatThrownBy(() -> s3.headObject(b -> b.bucket("data").key("bad"))).isInstanceOf(S3Exception.class);
        }
    }
}
