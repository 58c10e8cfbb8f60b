package dev.ferry.s3client;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of {@link S3ObjectStore}. Keys and defaults:
 * <ul>
 *   <li>{@code endpoint} (default: none, meaning AWS S3 for the region): an S3-compatible endpoint URL.
 *   <li>{@code region} (default {@code us-east-1}).
 *   <li>{@code pathStyle} (default {@code true} when an endpoint is set, else {@code false}): bucket in the
 *       path rather than the host name, as MinIO, Ceph RGW and local servers need.
 *   <li>{@code accessKeyId}, {@code secretAccessKey} (default: none, meaning the SDK's standard provider
 *       chain: environment, system properties, profile files, container and instance roles); which ones a
 *       client uses is {@link S3Credentials}' decision.
 *   <li>{@code maxConnections} (default 64): HTTP connections in the pool.
 *   <li>{@code connectTimeout} (default 5 s) and {@code socketTimeout} (default 30 s).
 * </ul>
 */
public record S3StoreConfig(
        URI endpoint,
        String region,
        boolean pathStyle,
        String accessKeyId,
        String secretAccessKey,
        int maxConnections,
        Duration connectTimeout,
        Duration socketTimeout) {

    public S3StoreConfig {
        if (region == null || region.isBlank()) {
            throw new IllegalArgumentException("region is missing");
        }
        if ((accessKeyId == null) != (secretAccessKey == null)) {
            throw new IllegalArgumentException("accessKeyId and secretAccessKey must be given together");
        }
        if (maxConnections < 1) {
            throw new IllegalArgumentException("maxConnections must be positive: " + maxConnections);
        }
        Objects.requireNonNull(connectTimeout, "connectTimeout is null");
        Objects.requireNonNull(socketTimeout, "socketTimeout is null");
    }

    /** AWS S3 in {@code us-east-1} with the standard credential chain. */
    public static S3StoreConfig aws() {
        return new S3StoreConfig(null, "us-east-1", false, null, null, 64,
                Duration.ofSeconds(5), Duration.ofSeconds(30));
    }

    /** An S3-compatible endpoint, path-style, with static credentials. */
    public static S3StoreConfig endpoint(URI endpoint, String accessKeyId, String secretAccessKey) {
        // S3 takes no credentials in a URL: user:password there is dropped, so that no error the SDK writes shows it
        return new S3StoreConfig(dev.ferry.util.Secrets.withoutUserInfo(Objects.requireNonNull(endpoint, "endpoint is null")), "us-east-1", true,
                accessKeyId, secretAccessKey, 64, Duration.ofSeconds(5), Duration.ofSeconds(30));
    }

    /** An S3-compatible endpoint, path-style, signed as {@code credentials} says. */
    public static S3StoreConfig endpoint(URI endpoint, S3Credentials credentials) {
        return endpoint(endpoint, credentials.accessKeyId(), credentials.secretAccessKey());
    }

    /** What this client signs with. */
    public S3Credentials credentials() {
        return new S3Credentials(accessKeyId, secretAccessKey);
    }

    /** The longest the client waits for a byte once a request is sent (an answer's head, a body that stops). */
    public S3StoreConfig withSocketTimeout(Duration timeout) {
        return new S3StoreConfig(endpoint, region, pathStyle, accessKeyId, secretAccessKey, maxConnections, connectTimeout, timeout);
    }

    public S3StoreConfig withMaxConnections(int connections) {
        return new S3StoreConfig(endpoint, region, pathStyle, accessKeyId, secretAccessKey, connections,
                connectTimeout, socketTimeout);
    }

    public S3StoreConfig withRegion(String newRegion) {
        return new S3StoreConfig(endpoint, newRegion, pathStyle, accessKeyId, secretAccessKey, maxConnections,
                connectTimeout, socketTimeout);
    }
}
