package dev.ferry.metrics;

import dev.ferry.cache.CacheStats;
import dev.ferry.cache.CachingStore;
import dev.ferry.store.StoreException;
import dev.ferry.store.chain.MeteredStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.function.ToDoubleFunction;

/**
 * The four numbers as Micrometer meters, for any registry (the CLI exposes them to Prometheus). Names, as
 * Prometheus shows them, are listed in docs/metrics.md:
 * <ul>
 *   <li>loader: {@code ferry_loader_samples_total}, {@code ferry_loader_wait_seconds} (a timer with p50/p99:
 *       the consumer's wait per step), {@code ferry_loader_epoch};
 *   <li>local tier: {@code ferry_cache_requests_total{result="hit|miss"}},
 *       {@code ferry_cache_bytes_total{source="cache|upstream"}}, {@code ferry_cache_evictions_total{cause}},
 *       {@code ferry_cache_resident_bytes}, {@code ferry_cache_write_failures_total};
 *   <li>egress: {@code ferry_egress_bytes_total}, {@code ferry_egress_requests_total{op}},
 *       {@code ferry_egress_throttled_total}, {@code ferry_egress_cost_usd_total}.
 * </ul>
 * The store and cache meters read the components' own counters when scraped; the loader meters are fed by
 * {@link #step}. Thread-safe.
 */
public final class FerryMetrics {
    private final Counter samples;
    private final Timer wait;
    private volatile int epoch;

    private FerryMetrics(MeterRegistry registry) {
        this.samples = Counter.builder("ferry.loader.samples").description("samples delivered to the consumer").register(registry);
        this.wait = Timer.builder("ferry.loader.wait").description("time the consumer waited for each batch (accelerator wait per step)")
                .publishPercentiles(0.5, 0.99).distributionStatisticExpiry(Duration.ofMinutes(1)).register(registry);
        Gauge.builder("ferry.loader.epoch", this, m -> m.epoch).description("the epoch being read").register(registry);
    }

    /** Binds the loader's meters, and the store's and cache's when given (either may be null). */
    public static FerryMetrics bind(MeterRegistry registry, MeteredStore origin, CachingStore cache) {
        FerryMetrics metrics = new FerryMetrics(registry);
        if (origin != null) {
            counter(registry, "ferry.egress.bytes", "bytes read from the object store", origin, m -> m.snapshot().egressBytes());
            counter(registry, "ferry.egress.cost.usd", "estimated cost of the object store's requests and egress, USD", origin,
                    m -> m.snapshot().estimatedCostUsd());
            counter(registry, "ferry.egress.throttled", "requests the object store answered SlowDown", origin,
                    m -> m.snapshot().failures(StoreException.Kind.THROTTLED));
            for (MeteredStore.Op op : MeteredStore.Op.values()) {
                FunctionCounter.builder("ferry.egress.requests", origin, m -> m.snapshot().requests(op))
                        .description("requests sent to the object store").tag("op", op.name().toLowerCase(java.util.Locale.ROOT))
                        .register(registry);
            }
        }
        if (cache != null) {
            FunctionCounter.builder("ferry.cache.requests", cache, c -> c.stats().hits()).tag("result", "hit")
                    .description("block reads by the local tier").register(registry);
            FunctionCounter.builder("ferry.cache.requests", cache, c -> c.stats().misses()).tag("result", "miss")
                    .description("block reads by the local tier").register(registry);
            FunctionCounter.builder("ferry.cache.bytes", cache, c -> c.stats().bytesFromCache()).tag("source", "cache")
                    .description("bytes the local tier served").register(registry);
            FunctionCounter.builder("ferry.cache.bytes", cache, c -> c.stats().bytesFromUpstream()).tag("source", "upstream")
                    .description("bytes the local tier served").register(registry);
            evictions(registry, cache, "capacity", CacheStats::evictedCapacity);
            evictions(registry, cache, "stale", CacheStats::evictedStale);
            evictions(registry, cache, "corrupt", CacheStats::evictedCorrupt);
            counter(registry, "ferry.cache.write.failures", "blocks the disk refused to keep", cache, c -> c.stats().writeFailures());
            counter(registry, "ferry.cache.verified.blocks", "resident blocks read back whole and checked against their CRC32C before "
                    + "their bytes left", cache, c -> c.stats().verifiedBlocks());
            Gauge.builder("ferry.cache.resident", cache, c -> c.stats().residentBytes()).baseUnit("bytes")
                    .description("bytes held by the local tier").register(registry);
        }
        return metrics;
    }

    private static <T> void counter(MeterRegistry registry, String name, String description, T source, ToDoubleFunction<T> f) {
        FunctionCounter.builder(name, source, f).description(description).register(registry);
    }

    private static void evictions(MeterRegistry registry, CachingStore cache, String cause, ToDoubleFunction<CacheStats> f) {
        FunctionCounter.builder("ferry.cache.evictions", cache, c -> f.applyAsDouble(c.stats())).tag("cause", cause)
                .description("blocks evicted from the local tier").register(registry);
    }

    /** One step of the consumer: its batch's samples and how long it waited for them. */
    public void step(int epoch, int batchSamples, long waitNanos) {
        this.epoch = epoch;
        samples.increment(batchSamples);
        wait.record(Duration.ofNanos(waitNanos));
    }
}
