package dev.ferry.embedded;

import dev.ferry.store.Prefixes;
import dev.ferry.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The store-side request limit: a token bucket per prefix; a request finding it empty is refused. Thread-safe. */
final class PrefixLimiter {
    private final double rate;
    private final double capacity;
    private final int depth;
    private final Clock clock;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();

    PrefixLimiter(double rate, double burstSeconds, int depth, Clock clock) {
        this.rate = rate;
        this.capacity = Math.max(1, rate * burstSeconds);
        this.depth = depth;
        this.clock = clock;
    }

    /** True when a request on this key may proceed; false means answer SlowDown. */
    boolean admit(String bucket, String key) {
        return buckets.computeIfAbsent(Prefixes.of(bucket, key == null ? "" : key, depth), p -> new Bucket()).take();
    }

    private final class Bucket {
        private double tokens = capacity;
        private long last = clock.nanoTime();

        synchronized boolean take() {
            long now = clock.nanoTime();
            tokens = Math.min(capacity, tokens + (now - last) / 1e9 * rate);
            last = now;
            if (tokens >= 1) {
                tokens -= 1;
                return true;
            }
            return false;
        }
    }
}
