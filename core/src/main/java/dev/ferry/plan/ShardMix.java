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
     * {@code prod_{i<m} (n - n_s - i) / (n - i)}. In logs that is {@code (P(n_s + m) - P(n_s)) - P(m)} with
     * {@code P(k) = sum_{j<k} log(n - j)} (and 0 when {@code n_s + m > n}): one pass over {@code j} up to the
     * largest index needed, so the cost is the samples plus the distinct shard sizes, not their product (a
     * manifest of shards of 1, 2, ..., 2,896 samples with a global batch of a million would take 3 x 10^9
     * logarithms). The sums are compensated (Kahan), so a difference of two sums near 10^8 keeps about 8 digits.
     */
    static double expectedDistinct(Manifest manifest, int m) {
        long n = manifest.totalSamples();
        TreeMap<Integer, Integer> shardsBySize = new TreeMap<>();
        for (Shard s : manifest.shards()) {
            shardsBySize.merge(s.samples(), 1, Integer::sum);
        }
        TreeMap<Long, Double> sumAt = new TreeMap<>(); // P(k) at each k needed
        sumAt.put((long) m, 0.0);
        for (int size : shardsBySize.keySet()) {
            if (size + (long) m <= n) {
                sumAt.put((long) size, 0.0);
                sumAt.put(size + (long) m, 0.0);
            }
        }
        double sum = 0;
        double lost = 0;
        long j = 0;
        for (var at : sumAt.entrySet()) {
            for (; j < at.getKey(); j++) {
                double term = Math.log(n - j) - lost;
                double next = sum + term;
                lost = (next - sum) - term;
                sum = next;
            }
            at.setValue(sum);
        }
        double drawn = sumAt.get((long) m);
        double expected = 0;
        for (var e : shardsBySize.entrySet()) {
            int size = e.getKey();
            double miss = size + (long) m > n ? 0 : Math.exp(sumAt.get(size + (long) m) - sumAt.get((long) size) - drawn);
            expected += e.getValue() * (1 - miss);
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
