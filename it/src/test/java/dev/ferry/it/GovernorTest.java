package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.Prices;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.chain.GovernedStore;
import dev.ferry.store.chain.GovernorConfig;
import dev.ferry.store.chain.MeterSnapshot;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.store.chain.RetryPolicy;
import dev.ferry.store.chain.RetryingStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-prefix governor against the embedded store's cloud profile over real sockets: a client pushing
 * at least 4x the prefix limit, which ungoverned sees most of its requests answered SlowDown, ends after a
 * short ramp with a quarter of that share or less, and still gets at least half the limit through. The
 * governor is not told the limit; it learns it from SlowDowns.
 *
 * <p>How close it settles (under 5% SlowDown, within 20% of the limit) is asserted on simulated time by
 * PrefixGovernorTest, where it does not depend on the machine: over real sockets on a shared 2-core runner,
 * a 6 s window at about 10 requests/s swung to 10% SlowDown and 0.7x the limit with the load average at 12.
 *
 * <p>The limit is set from what this machine delivers: the same client first measures the rate an unlimited
 * store answers it at, and the limit is a sixth of that (at most 50 requests/s), so that pushing 4x the
 * limit leaves room for the machine to slow down between the two measurements. A busy 2-core runner reaches
 * 66-136 requests/s, not the 200 a fixed limit of 50 would need.
 */
class GovernorTest {
    static final double MAX_LIMIT = 50;
    /** Below this the 6 s measurement holds too few requests to tell 20% apart. */
    static final double MIN_LIMIT = 10;
    static final int THREADS = 12;

    @TempDir
    Path root;

    @Test
    void pushing4xTheLimit_settlesNearTheLimit_withFewSlowDowns() throws Exception {
        CloudProfile unlimited = CloudProfile.none().withFirstByteLatency(Duration.ofMillis(10));
        ObjectKey key = ObjectKey.of("gov", "hot/object");
        Rate capacity;
        try (EmbeddedStore server = EmbeddedStore.start(root, 0, unlimited);
                S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "k", "s"))) {
            s3.createBucket("gov");
            s3.put(key, PutBody.ofBytes(new byte[100]));
            hammerQuietly(s3, key, Duration.ofMillis(500)); // warm the connections and the JIT
            capacity = hammer(new MeteredStore(s3, Prices.AWS_S3_STANDARD), key, Duration.ofSeconds(2));
        }
        double limit = Math.min(MAX_LIMIT, capacity.attemptsPerSecond() / 6);
        Assumptions.assumeTrue(limit >= MIN_LIMIT, String.format("this machine answers only %.0f requests/s with no limit: too busy "
                + "to offer 4x a limit of %.0f requests/s with room to spare", capacity.attemptsPerSecond(), MIN_LIMIT));

        try (EmbeddedStore server = EmbeddedStore.start(root, 0, unlimited.withPrefixRequestRate(limit))) {
            S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "k", "s"));

            // Ungoverned, the same client offers far more than the limit: the premise of the test. A machine that slowed
            // by more than a third since the first measurement (other work on a shared runner) cannot offer it, and this
            // run can then tell nothing about the governor: it is skipped, as above, rather than failed.
            MeteredStore bare = new MeteredStore(s3, Prices.AWS_S3_STANDARD);
            Rate offered = hammer(bare, key, Duration.ofSeconds(2));
            Assumptions.assumeTrue(offered.attemptsPerSecond() >= 4 * limit, String.format("the machine slowed down: the client offered "
                    + "%.0f requests/s, not 4x the limit of %.1f it could offer moments before", offered.attemptsPerSecond(), limit));
            // no pause for the prefix's bucket to refill: it holds 100 ms of the limit, and the ramp below is not measured

            MeteredStore meter = new MeteredStore(s3, Prices.AWS_S3_STANDARD);
            GovernedStore governed = new GovernedStore(meter, GovernorConfig.DEFAULT);
            ObjectStore client = new RetryingStore(governed, new RetryPolicy(20, Duration.ofMillis(20), Duration.ofSeconds(1)));
            // Two spans of real time against the store's real-time limit: the ramp, whose first SlowDowns teach the
            // governor the limit, then the measured span, the same governed client going on (PrefixGovernorTest asserts the
            // governor on simulated time).
            hammerQuietly(client, key, Duration.ofSeconds(4));
            MeterSnapshot before = meter.snapshot();
            long t0 = System.nanoTime();
            hammerQuietly(client, key, Duration.ofSeconds(6));
            MeterSnapshot after = meter.snapshot();
            double seconds = (System.nanoTime() - t0) / 1e9;

            long requests = after.requests(MeteredStore.Op.HEAD) - before.requests(MeteredStore.Op.HEAD);
            long slowDowns = after.failures(StoreException.Kind.THROTTLED) - before.failures(StoreException.Kind.THROTTLED);
            double throughput = (requests - slowDowns) / seconds;
            double slowDownRate = (double) slowDowns / requests;
            System.out.printf("governor: machine %.0f req/s unlimited, limit %.1f req/s; offered %.0f req/s ungoverned (%.0f%% SlowDown); "
                    + "governed %.1f req/s ok, %.2f%% SlowDown, state %s%n", capacity.attemptsPerSecond(), limit, offered.attemptsPerSecond(),
                    100 * offered.slowDownRate(), throughput, 100 * slowDownRate, governed.state());
            assertThat(slowDownRate).as("SlowDown share governed, against %.0f%% ungoverned", 100 * offered.slowDownRate())
                    .isLessThan(offered.slowDownRate() / 4);
            assertThat(throughput).as("requests/s through, against a limit of %.1f", limit).isBetween(0.5 * limit, 1.2 * limit);
            s3.close();
        }
    }

    record Rate(double attemptsPerSecond, double slowDownRate) {
    }

    private static Rate hammer(MeteredStore store, ObjectKey key, Duration duration) throws InterruptedException {
        hammerQuietly(store, key, duration);
        MeterSnapshot s = store.snapshot();
        long attempts = s.requests(MeteredStore.Op.HEAD);
        return new Rate(attempts / (duration.toNanos() / 1e9), (double) s.failures(StoreException.Kind.THROTTLED) / attempts);
    }

    private static void hammerQuietly(ObjectStore store, ObjectKey key, Duration duration) {
        long end = System.nanoTime() + duration.toNanos();
        AtomicBoolean failed = new AtomicBoolean();
        AtomicLong unexpected = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            threads.add(Thread.ofPlatform().start(() -> {
                while (System.nanoTime() < end) {
                    try {
                        store.head(key);
                    } catch (StoreException e) {
                        if (e.kind() != StoreException.Kind.THROTTLED) {
                            unexpected.incrementAndGet();
                            failed.set(true);
                        }
                    } catch (Exception e) {
                        unexpected.incrementAndGet();
                    }
                }
            }));
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        assertThat(unexpected.get()).as("failures other than SlowDown").isZero();
    }
}
