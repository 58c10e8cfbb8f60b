package dev.ferry.metrics;

import java.util.Locale;

/**
 * The four numbers for one epoch (field names as in the JSON report): samples/s, wait per step (p50, p99)
 * and in total, local hit rate by requests and by bytes, egress bytes, requests and estimated cost, and the
 * egress the plan predicted (-1 when there was no prediction), the plan's shuffle quality for the global
 * batch ({@code global_batch_shard_mix}, {@link dev.ferry.plan.ShardMix}), and {@code waitShare}: the share of the
 * consumers' own time they spent waiting for data (0 to 1; with several consumers, their waits over their time).
 */
public record EpochReport(
        int epoch,
        long samples,
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
        double waitShare) {
    public EpochReport {
        if (!(waitShare >= 0 && waitShare <= 1)) {
            throw new IllegalArgumentException("waitShare must be 0 to 1: " + waitShare);
        }
    }

    public String toJson() {
        return String.format(Locale.ROOT,
                "{\"epoch\":%d,\"samples\":%d,\"samples_per_s\":%.3f,\"wait_per_step_ms_p50\":%.3f,\"wait_per_step_ms_p99\":%.3f,"
                        + "\"wait_total_s\":%.3f,\"local_hit_rate\":%.6f,\"local_hit_rate_bytes\":%.6f,\"egress_bytes\":%d,"
                        + "\"egress_requests\":%d,\"egress_cost_usd\":%.6f,\"predicted_egress_bytes\":%d,\"global_batch_shard_mix\":%.4f,"
                        + "\"wait_share\":%.4f}",
                epoch, samples, samplesPerSecond, waitPerStepMillisP50, waitPerStepMillisP99, waitTotalSeconds, localHitRate,
                localHitRateBytes, egressBytes, egressRequests, egressCostUsd, predictedEgressBytes, globalBatchShardMix, waitShare);
    }
}
