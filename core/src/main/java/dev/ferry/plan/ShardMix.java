package dev.ferry.plan;

import java.util.List;
import java.util.TreeMap;

/**
 * Shuffle quality of a plan, in one figure a user can compare across partitions: the mean, over the steps
 * of an epoch, of the number of distinct shards in that step's global batch (every rank's batch together:
 * {@code batchSize * ranks} consecutive positions of the order, whatever the deal) divided by the number
 * expected when as many samples are drawn uniformly at random, without replacement, from the whole
 * dataset. 1 is as mixed as a uniform shuffle; a plan that reads a few shards at a time scores far less;
 * a batch drawn evenly from more shards than chance would meet (stratified) may score a little over 1.
 * Pure and thread-safe.
 */
public final class ShardMix {
    private ShardMix() {
    }

    /** The mix of one epoch's plan for global batches of {@code globalBatch} samples. */
    public static double of(EpochPlan plan, int globalBatch) {
        if (globalBatch < 1) {
            throw new IllegalArgumentException("globalBatch must be at least 1: " + globalBatch);
        }
        int n = plan.size();
        int m = Math.min(globalBatch, n);
        double expected = expectedDistinct(plan.manifest(), m);
        int[] seenAt = new int[plan.manifest().shards().size()];
        java.util.Arrays.fill(seenAt, -1);
        double sum = 0;
        int batches = 0;
        for (int from = 0; from + m <= n; from += m) {
            int distinct = 0;
            for (int q = from; q < from + m; q++) {
                int s = plan.shardOf(plan.sampleAt(q));
                if (seenAt[s] != from) {
                    seenAt[s] = from;
                    distinct++;
                }
            }
            sum += distinct;
            batches++;
        }
        return batches == 0 ? 1 : sum / batches / expected;
    }

    /**
     * Expected distinct shards among {@code m} samples drawn uniformly without replacement from the manifest:
     * the sum over shards of {@code 1 - P(none of its n_s samples drawn)}, where that probability is
     * {@code prod_{i<m} (n - n_s - i) / (n - i)}.
     */
    static double expectedDistinct(Manifest manifest, int m) {
        long n = manifest.totalSamples();
        TreeMap<Integer, Integer> shardsBySize = new TreeMap<>();
        for (Shard s : manifest.shards()) {
            shardsBySize.merge(s.samples(), 1, Integer::sum);
        }
        double expected = 0;
        for (var e : shardsBySize.entrySet()) {
            int size = e.getKey();
            double logMiss = 0;
            for (int i = 0; i < m; i++) {
                double num = n - size - i;
                if (num <= 0) {
                    logMiss = Double.NEGATIVE_INFINITY;
                    break;
                }
                logMiss += Math.log(num / (n - i));
            }
            expected += e.getValue() * (1 - Math.exp(logMiss));
        }
        return expected;
    }

    /** The mix of each of {@code epochs} epochs (1-based), for reports. */
    public static List<Double> perEpoch(Manifest manifest, PlanConfig config, int epochs, int globalBatch) {
        java.util.ArrayList<Double> out = new java.util.ArrayList<>();
        for (int e = 1; e <= epochs; e++) {
            out.add(of(EpochPlan.of(manifest, config, e), globalBatch));
        }
        return out;
    }
}
