package dev.ferry.store.chain;

import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.ObjectStore;
import dev.ferry.time.Clock;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The standard chain in front of an origin store:
 * {@code ParallelRead( Retrying( Governed( Metered( origin ) ) ) )}.
 *
 * <ul>
 *   <li>the meter sits on the origin, so it counts every request that reaches it, throttled or not, and
 *       every byte that crosses: what the store bills;
 *   <li>the governor paces every attempt and sees every SlowDown;
 *   <li>retries wrap the governor, so a retried request waits its turn again;
 *   <li>parallel ranged reads sit on top, so each part is retried, governed and metered.
 * </ul>
 * The chain is itself an {@link ObjectStore}; closing it closes the origin. Thread-safe.
 */
public final class StoreChain extends ForwardingObjectStore {
    private final MeteredStore meter;
    private final GovernedStore governor;
    private final RetryingStore retrying;

    private StoreChain(ParallelReadStore top, RetryingStore retrying, GovernedStore governor, MeteredStore meter) {
        super(top);
        this.retrying = retrying;
        this.governor = governor;
        this.meter = meter;
    }

    public static StoreChain over(ObjectStore origin, ChainConfig config) {
        return over(origin, config, Clock.system());
    }

    /** The chain, timing, pacing and backing off on {@code clock}. */
    public static StoreChain over(ObjectStore origin, ChainConfig config, Clock clock) {
        Objects.requireNonNull(origin, "origin is null");
        Objects.requireNonNull(config, "config is null");
        MeteredStore meter = new MeteredStore(origin, config.prices(), clock);
        GovernedStore governor = new GovernedStore(meter, config.governor(), clock);
        RetryingStore retrying = new RetryingStore(governor, config.retry(), clock, ThreadLocalRandom.current());
        return new StoreChain(new ParallelReadStore(retrying, config.parallelRead()), retrying, governor, meter);
    }

    /** What reached the origin: requests, bytes, failures, first-byte latency, estimated cost. */
    public MeteredStore meter() {
        return meter;
    }

    public GovernedStore governor() {
        return governor;
    }

    public RetryingStore retrying() {
        return retrying;
    }
}
