package dev.ferry.serve;

import dev.ferry.serve.jobs.ServeSnapshot;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A daemon on a free loopback port over a folder store or an S3 endpoint, and clients for it. Pick the store, add
 * settings, start: {@code DaemonFixture.overFolder(dir).with("write-back", true).start()}. Under {@code dir} the
 * folder store is {@code store/}, the embedded store's data {@code upstream/} and the local tier {@code cache/};
 * the daemon starts from {@code port 0, cache-size 1GiB, block-size 1MiB}, which {@link Builder#with} overrides
 * like any other key. Over a folder store or the embedded store, the bucket {@code data} exists once started.
 */
public final class DaemonFixture implements AutoCloseable {
    /** The folder store's root (bucket {@code data} is its folder {@code data}); null when the store is over S3. */
    public final Path root;
    public final Daemon daemon;

    /** A daemon over a folder store at {@code dir/store}, or at {@code store-root} if set. */
    public static Builder overFolder(Path dir) {
        return new Builder(Store.FOLDER, dir).with("store-root", dir.resolve("store"));
    }

    /**
     * A daemon whose upstream is an S3 endpoint, the embedded store over {@code dir/upstream} with no latency
     * profile: writes take the same path as against a real S3. {@link #root} is null.
     */
    public static Builder overS3(Path dir) {
        return new Builder(Store.EMBEDDED, dir).with("data-dir", dir.resolve("upstream")).with("profile", "none");
    }

    /** A daemon in front of {@code upstream}, an S3 endpoint the test runs: nothing is created there. */
    public static Builder overUpstream(URI upstream, Path dir) {
        return new Builder(Store.UPSTREAM, dir).with("upstream", upstream);
    }

    /**
     * A daemon in one of the modes the S3 semantics tests run in: over a folder store ({@code folder}), the same
     * with write-back ({@code write-back}), or over an S3 endpoint ({@code s3}, see {@link #overS3}).
     */
    public static Builder inMode(String mode, Path dir) {
        return switch (mode) {
            case "folder" -> overFolder(dir);
            case "write-back" -> overFolder(dir).with("write-back", true);
            case "s3" -> overS3(dir);
            default -> throw new IllegalArgumentException("no daemon mode '" + mode + "': folder, write-back or s3");
        };
    }

    private DaemonFixture(Builder b) throws IOException {
        this.root = b.store == Store.FOLDER ? Path.of(b.settings.get("store-root")) : null;
        if (root != null) {
            Files.createDirectories(root.resolve("data"));
        }
        this.daemon = Daemon.start(ServeConfig.defaults().with(b.settings), b.clock);
        if (b.store == Store.EMBEDDED) {
            try (S3Client s3 = sdk("a", "b")) {
                s3.createBucket(c -> c.bucket("data"));
            } catch (RuntimeException e) {
                daemon.close();
                throw e;
            }
        }
    }

    public URI endpoint() {
        return daemon.endpoint();
    }

    /** The AWS SDK for Java v2 as a user would set it up for ferry: path-style, default checksums. */
    public S3Client sdk(String accessKey, String secretKey) {
        return sdk(endpoint(), accessKey, secretKey);
    }

    /** The same client for any S3 endpoint (a store the test runs beside the daemon, to see what it holds). */
    public static S3Client sdk(URI endpoint, String accessKey, String secretKey) {
        return S3Client.builder().endpointOverride(endpoint).forcePathStyle(true).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .httpClientBuilder(ApacheHttpClient.builder()).build();
    }

    public ServeSnapshot stats() {
        return daemon.served();
    }

    @Override
    public void close() {
        daemon.close();
    }

    private enum Store {
        FOLDER, EMBEDDED, UPSTREAM
    }

    /** A daemon's store and settings, not started yet. Not thread-safe: one test builds it. */
    public static final class Builder {
        private final Store store;
        private final Map<String, String> settings = new LinkedHashMap<>();
        private Clock clock = Clock.system();

        private Builder(Store store, Path dir) {
            this.store = store;
            with("cache-dir", dir.resolve("cache")).with("port", 0).with("cache-size", "1GiB").with("block-size", "1MiB");
        }

        /** Sets {@code key} (a {@code ferry serve} setting) to {@code value} as text, over what was set before. */
        public Builder with(String key, Object value) {
            settings.put(key, String.valueOf(value));
            return this;
        }

        /** Sets each of {@code more}, over what was set before. */
        public Builder with(Map<String, String> more) {
            settings.putAll(more);
            return this;
        }

        /** The daemon reads time from {@code clock} (a {@code ManualClock} moves its TTLs without waiting them out). */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        public DaemonFixture start() throws IOException {
            return new DaemonFixture(this);
        }
    }
}
