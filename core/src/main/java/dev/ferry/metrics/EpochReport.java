package dev.ferry.metrics;

import java.util.Locale;

/**
 * The four numbers for one epoch (field names as in the JSON report): samples and steps (all ranks'), samples/s, wait per step (p50, p99)
 * and in total, local hit rate by requests and by bytes, egress bytes, requests and estimated cost, and the
 * egress the plan predicted (-1 when there was no prediction), the plan's shuffle quality for the global
 * batch ({@code global_batch_shard_mix}, {@link dev.ferry.plan.ShardMix}), and {@code waitShare}: the share of the
 * consumers' own time they spent waiting for data (0 to 1; with several consumers, their waits over their time);
 * {@code steadyWaitShare}: the same once the loader was running, each consumer's longest wait (its start-up: worker
 * processes starting, the first fetch) set aside, so that a short epoch whose first batch was slow is not read as a
 * loader that cannot keep up.
 * {@code localHitRate} and {@code localHitRateBytes} are the headline hit rate (by block reads, by bytes): the share
 * resident before the epoch asked; {@code sources} splits what was read into resident, prefetched and waited for
 * ({@link ReadSources}; null where the split was not measured: the hit rates then are what the tier served from
 * disk).
 */
public record EpochReport(
        int epoch,
        long samples,
        long steps,
        double samplesPerSecond,
        double waitPerStepMillisP50,
        double waitPerStepMillisP99,
        double waitTotalSeconds,
        double localHitRate,
        double localHitRateBytes,
        long egressBytes,
        long egressRequests,
        double egressCostUsd,
        long predictedEgressBytes,
        long throttled,
        double firstByteMillisP50,
        double globalBatchShardMix,
        double waitShare,
        double steadyWaitShare,
        ReadSources sources) {
    public EpochReport {
        if (!(waitShare >= 0 && waitShare <= 1) || !(steadyWaitShare >= 0 && steadyWaitShare <= 1)) {
            throw new IllegalArgumentException("waitShare and steadyWaitShare must be 0 to 1: " + waitShare + ", " + steadyWaitShare);
        }
    }

    /**
     * True when the epoch's data was local: with its reads split, under 2% of block reads waited for the object
     * store and it fetched under a tenth of what it read (a cold epoch is not local however well its prefetch kept
     * ahead: a few reads that wait on a fetch each can make all the waiting); else 90% of bytes from the tier.
     */
    public boolean dataLocal() {
        if (sources == null || sources.reads() == 0) {
            return readyShareBytes() >= 0.9;
        }
        return sources.waitedShareReads() < 0.02 && egressBytes < 0.1 * sources.bytes();
    }

    /** The share of bytes the loader did not wait for (resident or prefetched in time); the byte hit rate when not split. */
    public double readyShareBytes() {
        return sources == null ? localHitRateBytes : sources.readyShareBytes();
    }

    public String toJson() {
        return String.format(Locale.ROOT,
                "{\"epoch\":%d,\"samples\":%d,\"steps\":%d,\"samples_per_s\":%.3f,\"wait_per_step_ms_p50\":%.3f,\"wait_per_step_ms_p99\":%.3f,"
                        + "\"wait_total_s\":%.3f,\"local_hit_rate\":%.6f,\"local_hit_rate_bytes\":%.6f,\"egress_bytes\":%d,"
                        + "\"egress_requests\":%d,\"egress_cost_usd\":%.6f,\"predicted_egress_bytes\":%d,\"global_batch_shard_mix\":%.4f,"
                        + "\"wait_share\":%.4f,\"steady_wait_share\":%.4f%s}",
                epoch, samples, steps, samplesPerSecond, waitPerStepMillisP50, waitPerStepMillisP99, waitTotalSeconds, localHitRate,
                localHitRateBytes, egressBytes, egressRequests, egressCostUsd, predictedEgressBytes, globalBatchShardMix, waitShare,
                steadyWaitShare, sources == null ? "" : String.format(Locale.ROOT,
                        ",\"resident_bytes\":%d,\"prefetched_bytes\":%d,\"waited_bytes\":%d,\"resident_reads\":%d,\"prefetched_reads\":%d,"
                                + "\"waited_reads\":%d",
                        sources.residentBytes(), sources.prefetchedBytes(), sources.waitedBytes(), sources.residentReads(),
                        sources.prefetchedReads(), sources.waitedReads()));
    }

    /**
     * The share of {@code seconds} spent waiting once started: {@code waited} of it waited, {@code startup} of that in
     * the consumers' longest waits (one each), set aside from both; 0 to 1.
     */
    public static double steadyShare(double waited, double seconds, double startup) {
        double rest = seconds - startup;
        return rest <= 0 ? 0 : Math.clamp((waited - startup) / rest, 0.0, 1.0);
    }
}
