package dev.ferry.store.chain;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.Prefixes;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the per-prefix request governor ({@link GovernedStore}).
 *
 * <ul>
 *   <li>{@code prefixDepth} (default 1): how many leading '/'-separated key segments name a prefix, the unit
 *       S3 throttles by. Depth 1 puts {@code train/shard-001.tar} under {@code bucket/train/}.
 *   <li>{@code maxRate} (default 5,500 requests/s, S3's documented GET rate per prefix): the starting and the
 *       highest request rate per prefix.
 *   <li>{@code minRate} (default 1 request/s): the rate never falls below this.
 *   <li>{@code burst} (default 100 ms): how much unused rate a prefix may save up, as time at the current rate.
 *   <li>{@code initialConcurrency} (default 16) and {@code maxConcurrency} (default 64): requests in flight per
 *       prefix at the start and at most.
 *   <li>{@code decrease} (default 0.5): the factor concurrency is multiplied by on a SlowDown (AIMD's halving).
 *   <li>{@code rateDecrease} (default 0.7, TCP CUBIC's beta): the factor the request rate is multiplied by
 *       on a SlowDown.
 *   <li>{@code recovery} (default 2 s): the time the rate takes to climb back to where it was throttled.
 * </ul>
 */
public record GovernorConfig(
        int prefixDepth,
        double maxRate,
        double minRate,
        Duration burst,
        int initialConcurrency,
        int maxConcurrency,
        double decrease,
        double rateDecrease,
        Duration recovery) {

    public static final GovernorConfig DEFAULT =
            new GovernorConfig(1, 5500, 1, Duration.ofMillis(100), 16, 64, 0.5, 0.7, Duration.ofSeconds(2));

    public GovernorConfig {
        if (prefixDepth < 0) {
            throw new IllegalArgumentException("prefixDepth must not be negative: " + prefixDepth);
        }
        if (!(minRate > 0) || !(maxRate >= minRate)) {
            throw new IllegalArgumentException("need 0 < minRate <= maxRate: " + minRate + ", " + maxRate);
        }
        Objects.requireNonNull(burst, "burst is null");
        Objects.requireNonNull(recovery, "recovery is null");
        if (burst.isNegative() || recovery.isNegative() || recovery.isZero()) {
            throw new IllegalArgumentException("burst must be >= 0 and recovery > 0: " + burst + ", " + recovery);
        }
        if (initialConcurrency < 1 || maxConcurrency < initialConcurrency) {
            throw new IllegalArgumentException(
                    "need 1 <= initialConcurrency <= maxConcurrency: " + initialConcurrency + ", " + maxConcurrency);
        }
        if (!(decrease > 0 && decrease < 1) || !(rateDecrease > 0 && rateDecrease < 1)) {
            throw new IllegalArgumentException("decrease and rateDecrease must be between 0 and 1: " + decrease + ", " + rateDecrease);
        }
    }

    public GovernorConfig withMaxRate(double rate) {
        return new GovernorConfig(prefixDepth, rate, Math.min(minRate, rate), burst, initialConcurrency, maxConcurrency, decrease, rateDecrease, recovery);
    }

    public GovernorConfig withPrefixDepth(int depth) {
        return new GovernorConfig(depth, maxRate, minRate, burst, initialConcurrency, maxConcurrency, decrease, rateDecrease, recovery);
    }

    /** The throttling unit of a key: its bucket and first {@code prefixDepth} segments. */
    public String prefixOf(ObjectKey key) {
        return prefixOf(key.bucket(), key.key());
    }

    public String prefixOf(String bucket, String key) {
        return Prefixes.of(bucket, key, prefixDepth);
    }
}
