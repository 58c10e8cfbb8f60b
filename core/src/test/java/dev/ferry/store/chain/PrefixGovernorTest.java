package dev.ferry.store.chain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Drives the governor on simulated time against a modelled store that admits {@code LIMIT} requests per
 * second per prefix (a token bucket, as the embedded store's cloud profile does) and answers SlowDown
 * beyond it. The end-to-end version over real sockets is GovernorTest (module it), whose figures depend on
 * the machine; the targets (under 5% SlowDown, within 20% of the limit) are asserted here.
 */
class PrefixGovernorTest {
    static final double LIMIT = 200;
    static final long MS = 1_000_000L;

    @Test
    void slowDown_cutsRateToPointSevenOfSendRate_andHalvesConcurrency() {
        GovernorConfig config = GovernorConfig.DEFAULT.withMaxRate(1000);
        PrefixGovernor g = new PrefixGovernor(config, 0);
        long t = 0;
        // 100 requests sent 10 ms apart: a send rate of 100/s, far below the 1000/s budget
        for (int i = 0; i < 100; i++) {
            t += 10 * MS;
            assertThat(g.tryEnter()).isTrue();
            g.reserve(t);
            g.exit(t, t, false);
        }
        double concurrency = g.concurrencyLimit();
        assertThat(concurrency).isGreaterThan(config.initialConcurrency()); // grew additively on success
        assertThat(g.tryEnter()).isTrue();
        g.reserve(t);
        g.exit(t + MS, t, true);
        assertThat(g.rate()).isCloseTo(70, org.assertj.core.data.Offset.offset(5.0)); // the window estimate is approximate
        assertThat(g.concurrencyLimit()).isEqualTo(concurrency / 2);
        double cut = g.rate();
        // a second SlowDown of a request reserved before the decrease does not decrease again
        assertThat(g.tryEnter()).isTrue();
        g.exit(t + 2 * MS, t, true);
        assertThat(g.rate()).isEqualTo(cut);
        assertThat(g.throttles()).isEqualTo(2);
    }

    @Test
    void rate_climbsBackAlongCubicCurve_thenProbesBeyond() {
        GovernorConfig config = GovernorConfig.DEFAULT.withMaxRate(1000);
        PrefixGovernor g = new PrefixGovernor(config, 0);
        long t = 0;
        for (int i = 0; i < 100; i++) {
            t += 10 * MS;
            g.tryEnter();
            g.reserve(t);
            g.exit(t, t, false);
        }
        g.tryEnter();
        g.exit(t, t, true);
        double ceiling = g.rate() / 0.7;
        g.reserve(t + 1000 * MS);
        double afterOne = g.rate();
        g.reserve(t + 2000 * MS);
        double afterTwo = g.rate();
        g.reserve(t + 4000 * MS);
        double afterFour = g.rate();
        // concave: (1 - 0.3/8) of the way back after half the 2 s recovery time
        assertThat(afterOne).isCloseTo(ceiling * (1 - 0.3 / 8), org.assertj.core.data.Offset.offset(1e-6));
        assertThat(afterTwo).isCloseTo(ceiling, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(afterFour).isCloseTo(ceiling * 1.3, org.assertj.core.data.Offset.offset(1e-6)); // probing beyond
    }

    /** A client offering 4x the limit ends near the limit with few SlowDowns (simulated time). */
    @Test
    void against4xOverload_convergesNearLimit_withFewSlowDowns() {
        GovernorConfig config = GovernorConfig.DEFAULT.withMaxRate(4 * LIMIT);
        PrefixGovernor g = new PrefixGovernor(config, 0);
        ServerBucket server = new ServerBucket(LIMIT, 0.1);
        long latency = 20 * MS;
        long t = 0;
        long end = 30_000 * MS;
        long ramp = 5_000 * MS;
        long ok = 0;
        long slow = 0;
        // Offered load: a request every 1/(4*LIMIT) s; each waits for its token and is answered after latency.
        long interval = (long) (1e9 / (4 * LIMIT));
        long nextFree = 0;
        while (t < end) {
            t += interval;
            g.tryEnter();
            long wait = g.reserve(Math.max(t, nextFree));
            long sendAt = Math.max(t, nextFree) + wait;
            nextFree = sendAt; // requests go out in token order
            boolean admitted = server.admit(sendAt);
            g.exit(sendAt + latency, sendAt, !admitted);
            if (sendAt > ramp && sendAt < end) {
                if (admitted) {
                    ok++;
                } else {
                    slow++;
                }
            }
            t = Math.max(t, sendAt - interval);
        }
        double seconds = (end - ramp) / 1e9;
        double throughput = ok / seconds;
        double slowRate = (double) slow / (ok + slow);
        assertThat(slowRate).isLessThan(0.05);
        assertThat(throughput).isBetween(0.8 * LIMIT, 1.0 * LIMIT + 1);
    }

    /** The store side: a token bucket of {@code rate} per second holding {@code burstSeconds} of it. */
    static final class ServerBucket {
        final double rate;
        final double capacity;
        double tokens;
        long last;

        ServerBucket(double rate, double burstSeconds) {
            this.rate = rate;
            this.capacity = Math.max(1, rate * burstSeconds);
            this.tokens = capacity;
        }

        boolean admit(long now) {
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
