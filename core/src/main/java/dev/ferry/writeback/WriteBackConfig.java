package dev.ferry.writeback;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of {@link WriteBackStore}. Keys and defaults:
 * <ul>
 *   <li>{@code dir}: where acknowledged writes wait for upload (node-local disk); created if missing.
 *   <li>{@code quota}: bytes of pending writes at most; a write that would exceed it goes straight through to
 *       the object store instead (slower, never lost), with a warning and a count.
 *   <li>{@code uploaders} (4): uploads in flight; writes to one key are uploaded in the order acknowledged.
 *   <li>{@code partSize} (8 MiB): objects larger than this are uploaded as multipart uploads of such parts.
 *   <li>{@code maxBackoff} (10 s): longest wait between attempts of an upload that fails transiently; such an
 *       upload is retried until it succeeds or the store is closed.
 *   <li>{@code scratchBucket} (none): a bucket name that is node-local scratch: objects written there are kept
 *       on local disk only, never uploaded, within {@code scratchQuota} (default 0: no scratch) bytes, and
 *       expire {@code scratchTtl} (1 h) after they were written.
 * </ul>
 */
public record WriteBackConfig(Path dir, long quota, int uploaders, long partSize, Duration maxBackoff,
        String scratchBucket, long scratchQuota, Duration scratchTtl) {
    public WriteBackConfig {
        Objects.requireNonNull(dir, "dir is null");
        Objects.requireNonNull(maxBackoff, "maxBackoff is null");
        if (quota < 1 || uploaders < 1) {
            throw new IllegalArgumentException("quota and uploaders must be positive: " + quota + ", " + uploaders);
        }
        if (partSize < 5L << 20) {
            throw new IllegalArgumentException("partSize must be at least 5 MiB (S3's smallest part): " + partSize);
        }
        Objects.requireNonNull(scratchTtl, "scratchTtl is null");
        if (scratchQuota < 0 || scratchTtl.isNegative() || scratchTtl.isZero()) {
            throw new IllegalArgumentException("scratchQuota must be >= 0 and scratchTtl positive: " + scratchQuota + ", " + scratchTtl);
        }
        if (scratchBucket != null) {
            dev.ferry.store.ObjectKey.validateBucket(scratchBucket);
        }
    }

    public static WriteBackConfig of(Path dir, long quota) {
        return new WriteBackConfig(dir, quota, 4, 8L << 20, Duration.ofSeconds(10), null, 0, Duration.ofHours(1));
    }

    public WriteBackConfig withUploaders(int n) {
        return new WriteBackConfig(dir, quota, n, partSize, maxBackoff, scratchBucket, scratchQuota, scratchTtl);
    }

    public WriteBackConfig withMaxBackoff(Duration backoff) {
        return new WriteBackConfig(dir, quota, uploaders, partSize, backoff, scratchBucket, scratchQuota, scratchTtl);
    }

    /** Makes {@code bucket} node-local scratch of at most {@code quotaBytes}, each object living {@code ttl}. */
    public WriteBackConfig withScratch(String bucket, long quotaBytes, Duration ttl) {
        return new WriteBackConfig(dir, quota, uploaders, partSize, maxBackoff, bucket, quotaBytes, ttl);
    }
}
