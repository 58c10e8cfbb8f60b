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
 *   <li>{@code maxBackoff} (10 s): longest wait between attempts of an upload that fails transiently; while the
 *       store does not answer (an outage, throttling), such an upload is retried until it succeeds or the store is
 *       closed.
 *   <li>{@code maxRefusals} (8): an upload the store answers with an error this many times in a row (a 500 for one
 *       key) is reported failed: kept locally, served, named by status and every fence, and tried again once a
 *       minute while no newer write of its key waits. It never holds back the writes of other keys.
 *   <li>{@code settleWindow} (15 min): how long an upload attempt that ended with no answer may still land in the
 *       store. S3 (and MinIO, Ceph RGW) refuse a signed request 15 minutes after its date, so no attempt lands later
 *       than that. A key with such an attempt has its newest write checked in the store once the window has passed,
 *       and uploaded again if the late attempt overtook it, before that write is durable.
 * </ul>
 * A node-local scratch bucket (kept on local disk, never uploaded) is not write-back's: it is a {@link Scratch} the
 * node's door ({@code dev.ferry.tier.NodeStores}) routes its bucket to.
 */
public record WriteBackConfig(Path dir, long quota, int uploaders, long partSize, Duration maxBackoff, int maxRefusals,
        Duration settleWindow) {
    /** How long a request S3 has not yet seen can still be taken: the 15 minutes a signature is valid. */
    public static final Duration DEFAULT_SETTLE_WINDOW = Duration.ofMinutes(15);

    public WriteBackConfig {
        Objects.requireNonNull(dir, "dir is null");
        Objects.requireNonNull(maxBackoff, "maxBackoff is null");
        if (quota < 1 || uploaders < 1) {
            throw new IllegalArgumentException("quota and uploaders must be positive: " + quota + ", " + uploaders);
        }
        if (partSize < 5L << 20) {
            throw new IllegalArgumentException("partSize must be at least 5 MiB (S3's smallest part): " + partSize);
        }
        Objects.requireNonNull(settleWindow, "settleWindow is null");
        if (maxRefusals < 1 || settleWindow.isNegative()) {
            throw new IllegalArgumentException("maxRefusals must be positive and settleWindow not negative: " + maxRefusals + ", "
                    + settleWindow);
        }
    }

    public static WriteBackConfig of(Path dir, long quota) {
        return new WriteBackConfig(dir, quota, 4, 8L << 20, Duration.ofSeconds(10), 8, DEFAULT_SETTLE_WINDOW);
    }

    public WriteBackConfig withUploaders(int n) {
        return new WriteBackConfig(dir, quota, n, partSize, maxBackoff, maxRefusals, settleWindow);
    }

    public WriteBackConfig withPartSize(long bytes) {
        return new WriteBackConfig(dir, quota, uploaders, bytes, maxBackoff, maxRefusals, settleWindow);
    }

    public WriteBackConfig withMaxBackoff(Duration backoff) {
        return new WriteBackConfig(dir, quota, uploaders, partSize, backoff, maxRefusals, settleWindow);
    }

    public WriteBackConfig withMaxRefusals(int n) {
        return new WriteBackConfig(dir, quota, uploaders, partSize, maxBackoff, n, settleWindow);
    }

    public WriteBackConfig withSettleWindow(Duration window) {
        return new WriteBackConfig(dir, quota, uploaders, partSize, maxBackoff, maxRefusals, window);
    }
}
