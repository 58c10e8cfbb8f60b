package dev.ferry.serve;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/** With neither an upstream nor a store root, the daemon fronts the embedded store: it runs out of the box. */
class EmbeddedDefaultTest {
    @Test
    void theDefaultUpstreamIsTheEmbeddedStore(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("cache-size", "64MiB").start();
                S3Client s3 = S3Client.builder().endpointOverride(ferry.endpoint()).forcePathStyle(true)
                        .region(software.amazon.awssdk.regions.Region.US_EAST_1)
                        .credentialsProvider(software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider.create()).build()) {
            assertThat(ferry.daemon.node().stack().origin().description()).startsWith("embedded store over " + dir.resolve("upstream"));
            s3.createBucket(b -> b.bucket("demo-bucket"));
            s3.putObject(b -> b.bucket("demo-bucket").key("hello.txt"), RequestBody.fromString("hello through ferry"));
            assertThat(s3.getObjectAsBytes(b -> b.bucket("demo-bucket").key("hello.txt")).asUtf8String()).isEqualTo("hello through ferry");
            assertThat(s3.getObjectAsBytes(b -> b.bucket("demo-bucket").key("hello.txt")).asUtf8String()).isEqualTo("hello through ferry");
            assertThat(ferry.daemon.node().counters().cache().hits()).isPositive();
        }
    }

    @Test
    void aSecondDaemonOnTheSameCacheFolder_failsToStart_namingIt(@TempDir Path dir) throws Exception {
        try (DaemonFixture first = DaemonFixture.overS3(dir).with("cache-size", "64MiB").start()) {
            DaemonFixture.Builder second = DaemonFixture.overS3(dir.resolve("other")).with("cache-size", "64MiB")
                    .with("cache-dir", dir.resolve("cache"));
            org.assertj.core.api.Assertions.assertThatThrownBy(second::start).isInstanceOf(java.io.IOException.class)
                    .hasMessage("the cache folder " + dir.resolve("cache") + " is in use by another ferry daemon or mount; give each its own"
                            + " --cache-dir");
            assertThat(first.daemon.node().stack().cache().isPassThrough()).as("the first keeps its cache").isFalse();
        }
    }
}
