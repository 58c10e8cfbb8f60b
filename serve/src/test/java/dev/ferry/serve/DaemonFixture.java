package dev.ferry.serve;

import dev.ferry.serve.jobs.ServeSnapshot;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/** A daemon over a folder store (or an S3 endpoint) on a free loopback port, and clients for it. */
final class DaemonFixture implements AutoCloseable {
    final Path root;
    final Daemon daemon;

    DaemonFixture(Path dir, Map<String, String> settings) throws IOException {
        this.root = dir.resolve("store");
        java.nio.file.Files.createDirectories(root.resolve("data"));
        ServeConfig config = ServeConfig.defaults().with(Map.of("store-root", root.toString(), "cache-dir", dir.resolve("cache").toString(),
                "port", "0", "cache-size", "1GiB", "block-size", "1MiB")).with(settings);
        this.daemon = Daemon.start(config);
    }

    private DaemonFixture(Daemon daemon) {
        this.root = null;
        this.daemon = daemon;
    }

    /**
     * A daemon whose upstream is an S3 endpoint (the embedded store, no latency profile), with its bucket
     * {@code data} created: writes take the same path as against a real S3. {@link #root} is null.
     */
    static DaemonFixture overS3(Path dir, Map<String, String> settings) throws IOException {
        return overS3(dir, settings, Clock.system());
    }

    /** As {@link #overS3(Path, Map)}, the daemon reading time from {@code clock}. */
    static DaemonFixture overS3(Path dir, Map<String, String> settings, Clock clock) throws IOException {
        ServeConfig config = ServeConfig.defaults().with(Map.of("data-dir", dir.resolve("upstream").toString(), "cache-dir",
                dir.resolve("cache").toString(), "port", "0", "profile", "none", "cache-size", "1GiB", "block-size", "1MiB")).with(settings);
        DaemonFixture f = new DaemonFixture(Daemon.start(config, clock));
        try (S3Client s3 = f.sdk("a", "b")) {
            s3.createBucket(b -> b.bucket("data"));
        }
        return f;
    }

    /**
     * A daemon in one of the modes the S3 semantics tests run in: over a folder store ({@code folder}), the same
     * with write-back ({@code write-back}), or over an S3 endpoint ({@code s3}, see {@link #overS3}).
     */
    static DaemonFixture inMode(String mode, Path dir) throws IOException {
        return switch (mode) {
            case "folder" -> new DaemonFixture(dir, Map.of());
            case "write-back" -> new DaemonFixture(dir, Map.of("write-back", "true"));
            case "s3" -> overS3(dir, Map.of());
            default -> throw new IllegalArgumentException("no daemon mode '" + mode + "': folder, write-back or s3");
        };
    }

    URI endpoint() {
        return daemon.endpoint();
    }

    /** The AWS SDK for Java v2 as a user would set it up for ferry: path-style, default checksums. */
    S3Client sdk(String accessKey, String secretKey) {
        return S3Client.builder().endpointOverride(endpoint()).forcePathStyle(true).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .httpClientBuilder(ApacheHttpClient.builder()).build();
    }

    ServeSnapshot stats() {
        return daemon.served();
    }

    @Override
    public void close() {
        daemon.close();
    }
}
