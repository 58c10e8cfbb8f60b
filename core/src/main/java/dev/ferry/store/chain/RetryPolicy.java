package dev.ferry.store.chain;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@link RetryingStore} retries: at most {@code maxAttempts} tries in all, waiting a uniformly random
 * time between zero and {@code min(maxDelay, baseDelay * 2^retry)} before each retry ("full jitter", from
 * the AWS Architecture Blog's "Exponential Backoff And Jitter").
 *
 * <p>Defaults: {@code maxAttempts = 8}, {@code baseDelay = 50ms}, {@code maxDelay = 5s}.
 */
public record RetryPolicy(int maxAttempts, Duration baseDelay, Duration maxDelay) {
    public static final RetryPolicy DEFAULT = new RetryPolicy(8, Duration.ofMillis(50), Duration.ofSeconds(5));

    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1: " + maxAttempts);
        }
        Objects.requireNonNull(baseDelay, "baseDelay is null");
        Objects.requireNonNull(maxDelay, "maxDelay is null");
        if (baseDelay.isNegative() || maxDelay.compareTo(baseDelay) < 0) {
            throw new IllegalArgumentException("need 0 <= baseDelay <= maxDelay: " + baseDelay + ", " + maxDelay);
        }
    }

    /** The upper bound of the wait before retry number {@code retry} (1 = the first retry). */
    public long capNanos(int retry) {
        long base = baseDelay.toNanos();
        int shift = Math.min(retry - 1, 30);
        long cap = base << shift;
        if (cap < 0 || (shift > 0 && cap >> shift != base)) {
            cap = Long.MAX_VALUE;
        }
        return Math.min(cap, maxDelay.toNanos());
    }
}
