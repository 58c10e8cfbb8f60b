package dev.ferry.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * What the AWS SDK for Java v2 sees of S3's finer points: empty objects, ranges past the end, and one
 * status (501) for what ferry does not implement.
 */
class S3FidelityTest {
    @TempDir
    static Path dir;
    static DaemonFixture ferry;
    static S3Client s3;

    @BeforeAll
    static void start() throws Exception {
        ferry = new DaemonFixture(dir, Map.of());
        s3 = ferry.sdk("any", "thing");
    }

    @AfterAll
    static void stop() {
        s3.close();
        ferry.close();
    }

    private static int status(Throwable t) {
        return ((S3Exception) t).statusCode();
    }

    private static String code(Throwable t) {
        return ((S3Exception) t).awsErrorDetails().errorCode();
    }

    @Test
    void put_ofAnEmptyBody_storesAnEmptyObject() throws Exception {
        s3.putObject(b -> b.bucket("data").key("empty"), RequestBody.empty());
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("empty")).asByteArray()).isEmpty();
        assertThat(s3.headObject(b -> b.bucket("data").key("empty")).contentLength()).isZero();
        RawHttp.Answer raw = RawHttp.exchange(ferry.daemon.port(),
                "PUT /data/empty-raw HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        assertThat(raw.status()).as(raw.body()).isEqualTo(200);
        assertThat(Files.size(ferry.root.resolve("data/empty-raw"))).isZero();
    }

    @Test
    void get_withARangeStartingAtOrPastTheEnd_isInvalidRange() {
        s3.putObject(b -> b.bucket("data").key("ten"), RequestBody.fromString("0123456789"));
        for (String range : List.of("bytes=10-", "bytes=11-", "bytes=10-20")) {
            assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("ten").range(range)))
                    .as(range).satisfies(e -> {
                        assertThat(status(e)).isEqualTo(416);
                        assertThat(code(e)).isEqualTo("InvalidRange");
                    });
        }
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("ten").range("bytes=9-")).asUtf8String()).isEqualTo("9");
    }

    @Test
    void unsupportedOperations_are501NotImplemented_andNotRetried() {
        s3.putObject(b -> b.bucket("data").key("acl"), RequestBody.fromString("x"));
        long before = ferry.stats().requests();
        assertThatThrownBy(() -> s3.getObjectAcl(b -> b.bucket("data").key("acl")))
                .satisfies(e -> assertThat(status(e)).isEqualTo(501)).satisfies(e -> assertThat(code(e)).isEqualTo("NotImplemented"));
        assertThat(ferry.stats().requests() - before).as("the SDK does not retry a 501").isEqualTo(1);
        assertThatThrownBy(() -> s3.copyObject(b -> b.sourceBucket("data").sourceKey("acl").destinationBucket("data").destinationKey("c")))
                .satisfies(e -> assertThat(status(e)).isEqualTo(501));
        assertThat(ferry.stats().serverErrors()).as("a 501 is no fault of the daemon").isZero();
    }
}
