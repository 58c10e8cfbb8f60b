package dev.ferry.metrics;

import dev.ferry.cache.CachingStore;
import dev.ferry.loader.LoaderStats;
import dev.ferry.store.StoreException;
import dev.ferry.store.chain.MeterSnapshot;
import dev.ferry.store.chain.MeteredStore;

/**
 * Takes the four numbers of an epoch: snapshots the origin's meter when the epoch starts, and becomes the local
 * tier's (if any) {@link dev.ferry.cache.TierLedger} to split its reads by where they came from ({@link ReadSources}); combines them
 * with the loader's stats when it ends. One meter per tier. Not thread-safe.
 */
public final class EpochMeter {
    private final MeteredStore meter;
    private final CachingStore cache;
    private MeterSnapshot meterAtStart;
    private ReadTally reads;

    /** {@code cache} may be null: a run without a local tier. */
    public EpochMeter(MeteredStore meter, CachingStore cache) {
        this.meter = meter;
        this.cache = cache;
    }

    /** The epoch starts now: its reads are split by whether their blocks were resident before this moment. */
    public void start() {
        meterAtStart = meter.snapshot();
        if (cache != null) {
            ReadTally tally = new ReadTally();
            cache.ledger(tally.ledger(cache.clock().nanoTime()));
            reads = tally;
        }
    }

    /** The consumer's waits over the epoch's time (the loader's one consumer), at most 1. */
    private static double waitShare(LoaderStats loader) {
        double seconds = loader.samplesPerSecond() > 0 ? loader.samples() / loader.samplesPerSecond() : 0;
        return seconds <= 0 ? 0 : Math.min(1.0, loader.waitTotalSeconds() / seconds);
    }

    public EpochReport finish(LoaderStats loader, long predictedEgressBytes) {
        MeterSnapshot now = meter.snapshot();
        ReadSources sources = reads == null ? ReadSources.NONE : reads.sources();
        return new EpochReport(loader.epoch(), loader.samples(), loader.steps(), loader.samplesPerSecond(), loader.waitP50Millis(),
                loader.waitP99Millis(), loader.waitTotalSeconds(), sources.residentShareReads(), sources.residentShareBytes(),
                now.egressBytes() - meterAtStart.egressBytes(), now.totalRequests() - meterAtStart.totalRequests(),
                now.estimatedCostUsd() - meterAtStart.estimatedCostUsd(), predictedEgressBytes,
                now.failures(StoreException.Kind.THROTTLED) - meterAtStart.failures(StoreException.Kind.THROTTLED),
                now.firstByteP50Micros() / 1000.0, loader.globalBatchShardMix(), waitShare(loader),
                EpochReport.steadyShare(loader.waitTotalSeconds(), loader.seconds(), Math.min(loader.waitTotalSeconds(), loader.waitMaxSeconds())),
                sources);
    }
}
