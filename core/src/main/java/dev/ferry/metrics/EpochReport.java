package dev.ferry.metrics;

import java.util.Locale;

/**
 * The four numbers for one epoch (field names as in the JSON report): samples and steps (all ranks'), samples/s, wait per step (p50, p99)
 * and in total, local hit rate by requests and by bytes, egress bytes, requests and estimated cost, and the
 * egress the plan predicted (-1 when there was no prediction), the plan's shuffle quality for the global
 * batch ({@code global_batch_shard_mix}, {@link dev.ferry.plan.ShardMix}), and {@code waitShare}: the share of the
 * consumers' own time they spent waiting for data (0 to 1; with several consumers, their waits over their time).
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
        ReadSources sources) {
    public EpochReport {
        if (!(waitShare >= 0 && waitShare <= 1)) {
            throw new IllegalArgumentException("waitShare must be 0 to 1: " + waitShare);
        }
    }

    /**
     * The share of the consumers' time spent waiting at a typical step: the wait share, less what the slowest steps
     * (a loader's start-up, one slow fetch) add beyond the median wait. A short epoch whose first batch waited for
     * worker processes to start has a large wait share and a small typical one.
     */
    public double typicalWaitShare() {
        if (steps <= 0 || waitTotalSeconds <= 0) {
            return waitShare;
        }
        return waitShare * Math.min(1.0, waitPerStepMillisP50 * steps / 1000.0 / waitTotalSeconds);
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
                        + "\"wait_share\":%.4f%s}",
                epoch, samples, steps, samplesPerSecond, waitPerStepMillisP50, waitPerStepMillisP99, waitTotalSeconds, localHitRate,
                localHitRateBytes, egressBytes, egressRequests, egressCostUsd, predictedEgressBytes, globalBatchShardMix, waitShare,
                sources == null ? "" : String.format(Locale.ROOT,
                        ",\"resident_bytes\":%d,\"prefetched_bytes\":%d,\"waited_bytes\":%d,\"resident_reads\":%d,\"prefetched_reads\":%d,"
                                + "\"waited_reads\":%d",
                        sources.residentBytes(), sources.prefetchedBytes(), sources.waitedBytes(), sources.residentReads(),
                        sources.prefetchedReads(), sources.waitedReads()));
    }
}
