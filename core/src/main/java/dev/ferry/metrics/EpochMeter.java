package dev.ferry.metrics;

import dev.ferry.cache.CacheStats;
import dev.ferry.cache.CachingStore;
import dev.ferry.loader.LoaderStats;
import dev.ferry.store.StoreException;
import dev.ferry.store.chain.MeterSnapshot;
import dev.ferry.store.chain.MeteredStore;

/**
 * Takes the four numbers of an epoch: snapshots the origin's meter and the local tier (if any) when the
 * epoch starts, and combines the differences with the loader's stats when it ends. Not thread-safe.
 */
public final class EpochMeter {
    private final MeteredStore meter;
    private final CachingStore cache;
    private MeterSnapshot meterAtStart;
    private CacheStats cacheAtStart;

    /** {@code cache} may be null: a run without a local tier. */
    public EpochMeter(MeteredStore meter, CachingStore cache) {
        this.meter = meter;
        this.cache = cache;
    }

    public void start() {
        meterAtStart = meter.snapshot();
        cacheAtStart = cache == null ? null : cache.stats();
    }

    /** The consumer's waits over the epoch's time (the loader's one consumer), at most 1. */
    private static double waitShare(LoaderStats loader) {
        double seconds = loader.samplesPerSecond() > 0 ? loader.samples() / loader.samplesPerSecond() : 0;
        return seconds <= 0 ? 0 : Math.min(1.0, loader.waitTotalSeconds() / seconds);
    }

    public EpochReport finish(LoaderStats loader, long predictedEgressBytes) {
        MeterSnapshot now = meter.snapshot();
        double hitRate = 0;
        double byteHitRate = 0;
        if (cache != null) {
            CacheStats c = cache.stats();
            long hits = c.hits() - cacheAtStart.hits();
            long misses = c.misses() - cacheAtStart.misses();
            long fromCache = c.bytesFromCache() - cacheAtStart.bytesFromCache();
            long fromUpstream = c.bytesFromUpstream() - cacheAtStart.bytesFromUpstream();
            hitRate = hits + misses == 0 ? 0 : (double) hits / (hits + misses);
            byteHitRate = fromCache + fromUpstream == 0 ? 0 : (double) fromCache / (fromCache + fromUpstream);
        }
        return new EpochReport(loader.epoch(), loader.samples(), loader.samplesPerSecond(), loader.waitP50Millis(),
                loader.waitP99Millis(), loader.waitTotalSeconds(), hitRate, byteHitRate,
                now.egressBytes() - meterAtStart.egressBytes(), now.totalRequests() - meterAtStart.totalRequests(),
                now.estimatedCostUsd() - meterAtStart.estimatedCostUsd(), predictedEgressBytes,
                now.failures(StoreException.Kind.THROTTLED) - meterAtStart.failures(StoreException.Kind.THROTTLED),
                now.firstByteP50Micros() / 1000.0, loader.globalBatchShardMix(), waitShare(loader));
    }
}
