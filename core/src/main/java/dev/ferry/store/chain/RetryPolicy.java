package dev.ferry.store.chain;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@link RetryingStore} retries: at most {@code maxAttempts} tries in all, waiting a uniformly random
 * time between zero and {@code min(maxDelay, baseDelay * 2^retry)} before each retry ("full jitter", from
 * the AWS Architecture Blog's "Exponential Backoff And Jitter").
 *
 * <p>A read that breaks mid-body resumes where it stopped; {@code readStallBudget} bounds the time a read spends
 * stalled (from its last byte to each failure, a socket timeout included), summed over its resumes: past it the
 * read fails instead of resuming again.
 *
 * <p>Defaults: {@code maxAttempts = 8}, {@code baseDelay = 50ms}, {@code maxDelay = 5s}, {@code readStallBudget = 10m}.
 */
public record RetryPolicy(int maxAttempts, Duration baseDelay, Duration maxDelay, Duration readStallBudget) {
    public static final Duration DEFAULT_READ_STALL_BUDGET = Duration.ofMinutes(10);
    public static final RetryPolicy DEFAULT = new RetryPolicy(8, Duration.ofMillis(50), Duration.ofSeconds(5));

    /** A policy with the default read stall budget. */
    public RetryPolicy(int maxAttempts, Duration baseDelay, Duration maxDelay) {
        this(maxAttempts, baseDelay, maxDelay, DEFAULT_READ_STALL_BUDGET);
    }

    public RetryPolicy {
        Objects.requireNonNull(readStallBudget, "readStallBudget is null");
        if (readStallBudget.isNegative() || readStallBudget.isZero()) {
            throw new IllegalArgumentException("readStallBudget must be positive: " + readStallBudget);
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1: " + maxAttempts);
        }
        Objects.requireNonNull(baseDelay, "baseDelay is null");
        Objects.requireNonNull(maxDelay, "maxDelay is null");
        if (baseDelay.isNegative() || maxDelay.compareTo(baseDelay) < 0) {
            throw new IllegalArgumentException("need 0 <= baseDelay <= maxDelay: " + baseDelay + ", " + maxDelay);
        }
    }

    public RetryPolicy withReadStallBudget(Duration budget) {
        return new RetryPolicy(maxAttempts, baseDelay, maxDelay, budget);
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
