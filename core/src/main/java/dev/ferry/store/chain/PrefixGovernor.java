package dev.ferry.store.chain;

/**
 * The request budget of one prefix: a token bucket whose rate adapts to throttling, and a concurrency limit
 * under AIMD.
 *
 * <p>On a SlowDown, concurrency is halved ({@code decrease}) and then grows additively, one slot per window
 * of successes. The rate follows TCP CUBIC (Ha, Rhee and Xu, 2008; RFC 9438): it drops to
 * {@code rateDecrease} (0.7, CUBIC's beta) of the rate at which requests were actually being sent when the
 * store pushed back, then climbs back along a cubic curve: fast at first, flat near the rate that was
 * throttled, probing slowly beyond it. Plain additive increase from half the limit would average 75% of the
 * limit; the cubic plateau keeps the average near 90% with a SlowDown only every few seconds. SlowDowns of
 * requests reserved before the last decrease count as one, as TCP counts one loss per window.
 *
 * <p>Pure state driven by the caller's clock: no threads, no sleeping. Thread-safe (all methods
 * synchronized); {@link GovernedStore} does the waiting.
 */
final class PrefixGovernor {
    private static final int WINDOW_SLOTS = 5;
    private static final long SLOT_NANOS = 100_000_000L;
    private static final long MIN_MEASURE_NANOS = 200_000_000L;

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
    private final long[] slotSends = new long[WINDOW_SLOTS];
    private final long[] slotIndex = new long[WINDOW_SLOTS];
    private long firstSend = Long.MIN_VALUE;

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
        long wait = tokens >= 0 ? 0 : (long) (-tokens / rate * 1e9);
        recordSend(now); // reservations, not send times: the window only ever moves forward
        return wait;
    }

    /** A request that entered has finished; {@code throttled} when the store answered SlowDown. */
    synchronized void exit(long now, long reservedAt, boolean throttled) {
        inFlight--;
        if (throttled) {
            throttles++;
            if (reservedAt >= lastDecrease) {
                decrease(now);
            }
        } else {
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
        // The rate that met the limit is what was being sent, unless we sent less than our budget allowed.
        // Until a fifth of a second of sends is on record that measure is noise: decrease what we have.
        double sent = now - firstSend >= MIN_MEASURE_NANOS ? sendRate(now) : 0;
        double base = sent > 0 ? Math.min(rate, sent) : rate;
        ceiling = Math.max(config.minRate(), base);
        rate = Math.max(config.minRate(), ceiling * config.rateDecrease());
        double k = config.recovery().toNanos() / 1e9;
        cubicC = ceiling * (1 - config.rateDecrease()) / (k * k * k);
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

    private void recordSend(long at) {
        if (firstSend == Long.MIN_VALUE) {
            firstSend = at;
        }
        long index = Math.floorDiv(at, SLOT_NANOS);
        int slot = (int) Math.floorMod(index, (long) WINDOW_SLOTS);
        if (slotIndex[slot] != index) {
            slotIndex[slot] = index;
            slotSends[slot] = 0;
        }
        slotSends[slot]++;
    }

    /** Requests sent per second over the last half second (or since the first, if sooner). */
    private double sendRate(long now) {
        long current = Math.floorDiv(now, SLOT_NANOS);
        long sum = 0;
        for (int i = 0; i < WINDOW_SLOTS; i++) {
            if (slotIndex[i] > current - WINDOW_SLOTS && slotIndex[i] <= current) {
                sum += slotSends[i];
            }
        }
        long windowStart = Math.max((current - WINDOW_SLOTS + 1) * SLOT_NANOS, firstSend);
        return sum / Math.max(1e-3, (now - windowStart) / 1e9);
    }
}
