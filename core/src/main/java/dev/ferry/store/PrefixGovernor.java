package dev.ferry.store;

/**
 * The request budget of one prefix: a token bucket whose rate adapts to throttling, and a concurrency limit
 * under AIMD.
 *
 * <p>On a SlowDown, the rate drops to {@code decrease} times the rate of <em>successful</em> requests over
 * the last second (what the store actually admitted) and concurrency is multiplied by {@code decrease};
 * concurrency then grows additively (one slot per window of successes). The rate climbs back along TCP
 * CUBIC's curve (Ha, Rhee and Xu, 2008): fast at first, flat near the rate that was throttled, probing
 * slowly beyond it. Plain additive increase from half the limit would average 75% of the limit; the cubic
 * plateau keeps the average near 90% with a SlowDown only every few seconds. Several SlowDowns from
 * requests started before the last decrease count as one, as TCP counts one loss per window.
 *
 * <p>Pure state driven by the caller's clock: no threads, no sleeping. Thread-safe (all methods
 * synchronized); {@link GovernedStore} does the waiting.
 */
final class PrefixGovernor {
    private static final int WINDOW_SLOTS = 10;
    private static final long SLOT_NANOS = 100_000_000L;

    private final GovernorConfig config;
    private double rate;
    private double tokens;
    private long lastRefill;
    private double ceiling = Double.NaN;
    private double cubicC;
    private long lastDecrease = Long.MIN_VALUE;
    private double concurrencyLimit;
    private int inFlight;
    private long throttles;
    private final long[] slotSuccesses = new long[WINDOW_SLOTS];
    private final long[] slotIndex = new long[WINDOW_SLOTS];

    PrefixGovernor(GovernorConfig config, long now) {
        this.config = config;
        this.rate = config.maxRate();
        this.tokens = burstTokens();
        this.lastRefill = now;
        this.concurrencyLimit = config.initialConcurrency();
    }

    /** True when a request may start now (a concurrency slot is free); it must then call {@link #reserve}. */
    synchronized boolean tryEnter() {
        if (inFlight < Math.max(1, (int) concurrencyLimit)) {
            inFlight++;
            return true;
        }
        return false;
    }

    /** Takes one token and returns how long to wait before sending (0 when one was in the bucket). */
    synchronized long reserve(long now) {
        updateRate(now);
        refill(now);
        tokens -= 1;
        if (tokens >= 0) {
            return 0;
        }
        return (long) (-tokens / rate * 1e9);
    }

    /** A request that entered has finished; {@code throttled} when the store answered SlowDown. */
    synchronized void exit(long now, long startedAt, boolean throttled) {
        inFlight--;
        if (throttled) {
            throttles++;
            if (startedAt >= lastDecrease) {
                decrease(now);
            }
        } else {
            recordSuccess(now);
            concurrencyLimit = Math.min(config.maxConcurrency(), concurrencyLimit + 1.0 / Math.max(1, concurrencyLimit));
        }
    }

    /** A request that entered was abandoned before it was sent. */
    synchronized void cancel() {
        inFlight--;
    }

    synchronized double rate() {
        return rate;
    }

    synchronized double concurrencyLimit() {
        return concurrencyLimit;
    }

    synchronized long throttles() {
        return throttles;
    }

    private void decrease(long now) {
        double admitted = successRate(now);
        double base = admitted > 0 ? Math.min(rate, admitted) : rate;
        ceiling = Math.max(config.minRate(), base);
        rate = Math.max(config.minRate(), ceiling * config.decrease());
        double k = config.recovery().toNanos() / 1e9;
        cubicC = ceiling * (1 - config.decrease()) / (k * k * k);
        lastDecrease = now;
        tokens = Math.min(tokens, 0);
        concurrencyLimit = Math.max(1, concurrencyLimit * config.decrease());
    }

    private void updateRate(long now) {
        if (Double.isNaN(ceiling)) {
            return;
        }
        double t = (now - lastDecrease) / 1e9 - config.recovery().toNanos() / 1e9;
        double target = ceiling + cubicC * t * t * t;
        rate = Math.max(config.minRate(), Math.min(config.maxRate(), target));
    }

    private void refill(long now) {
        if (now > lastRefill) {
            tokens = Math.min(burstTokens(), tokens + (now - lastRefill) / 1e9 * rate);
            lastRefill = now;
        }
    }

    private double burstTokens() {
        return Math.max(1, rate * config.burst().toNanos() / 1e9);
    }

    private void recordSuccess(long now) {
        long index = Math.floorDiv(now, SLOT_NANOS);
        int slot = (int) Math.floorMod(index, (long) WINDOW_SLOTS);
        if (slotIndex[slot] != index) {
            slotIndex[slot] = index;
            slotSuccesses[slot] = 0;
        }
        slotSuccesses[slot]++;
    }

    /** Successful requests per second over the last full second. */
    private double successRate(long now) {
        long current = Math.floorDiv(now, SLOT_NANOS);
        long sum = 0;
        for (int i = 0; i < WINDOW_SLOTS; i++) {
            if (slotIndex[i] > current - WINDOW_SLOTS && slotIndex[i] <= current) {
                sum += slotSuccesses[i];
            }
        }
        return sum / (WINDOW_SLOTS * SLOT_NANOS / 1e9);
    }
}
