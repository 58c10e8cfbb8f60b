package dev.ferry.metrics;

import dev.ferry.util.Sizes;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongUnaryOperator;

/**
 * Reads the four numbers together and says, in plain words, what limits the run. Each finding names the
 * evidence and what to change. Rules:
 * <ol>
 *   <li>Data is local ({@link EpochReport#dataLocal}: few reads waited, little fetched) yet a typical step waits:
 *       preprocessing is CPU-bound; add decode workers.
 *   <li>After the first epoch, a quarter of the dataset or more still fetched each epoch and under 75% of the
 *       bytes resident before the epoch asked: the working set outgrew the node; says the cache size the plan
 *       needs (from the simulator).
 *   <li>More than 1% of requests answered SlowDown: the governor is holding back; spread keys over more
 *       prefixes.
 *   <li>The consumer waits, and the data was not local: it waits on the object store; raise fetch concurrency
 *       (how far, from the wait share and the reads in flight).
 *   <li>A tail: p99 wait far above p50 after the first epoch, with misses and room for more reads in flight:
 *       prefetch is too shallow (say which setting).
 *   <li>Trends: a wait rising three epochs running; a hit rate falling while egress holds.
 *   <li>When none of these: one line saying no problem was found, with the evidence.
 *   <li>Always: the projected egress and its cost for the whole run.
 * </ol>
 * Pure: it reads reports and context, no I/O. Thread-safe (stateless).
 */
public final class Advisor {
    /** How the line that finds nothing wrong begins. */
    public static final String NO_PROBLEM = "No problem found";
    /** How the projection of the run's egress, given always, begins. */
    public static final String PROJECTED = "Projected egress";

    /**
     * What the advisor knows beyond the reports. {@code decodeWorkers} 0: unknown (the daemon does not see the
     * client's workers). {@code readsInFlight} and {@code firstByteShare}: measured over the last epoch (NaN
     * when not measured: the loader then names its configured {@code fetchConcurrency}). {@code governor}: what the
     * prefix governor is doing, in words ("" when not known), quoted by the throttling finding.
     */
    public record Context(long datasetBytes, long cacheBytes, int decodeWorkers, int fetchConcurrency, int plannedEpochs,
            double egressCostPerByte, LongUnaryOperator predictedSteadyEgressAtCapacity, double readsInFlight, double firstByteShare,
            String governor) {
        public Context(long datasetBytes, long cacheBytes, int decodeWorkers, int fetchConcurrency, int plannedEpochs,
                double egressCostPerByte, LongUnaryOperator predictedSteadyEgressAtCapacity) {
            this(datasetBytes, cacheBytes, decodeWorkers, fetchConcurrency, plannedEpochs, egressCostPerByte,
                    predictedSteadyEgressAtCapacity, Double.NaN, Double.NaN, "");
        }

        public Context(long datasetBytes, long cacheBytes, int decodeWorkers, int fetchConcurrency, int plannedEpochs,
                double egressCostPerByte, LongUnaryOperator predictedSteadyEgressAtCapacity, double readsInFlight, double firstByteShare) {
            this(datasetBytes, cacheBytes, decodeWorkers, fetchConcurrency, plannedEpochs, egressCostPerByte,
                    predictedSteadyEgressAtCapacity, readsInFlight, firstByteShare, "");
        }
    }

    /** How the finding that the loader's CPU, not its reads, bounds the job begins. */
    public static final String CPU_BOUND = "Preprocessing is CPU-bound";

    private Advisor() {
    }

    public static List<String> advise(List<EpochReport> epochs, Context context) {
        List<String> findings = new ArrayList<>();
        if (epochs.isEmpty()) {
            return findings;
        }
        EpochReport last = epochs.get(epochs.size() - 1);
        double waitShare = last.waitShare();
        // waiting is a finding when the consumer waited a real share of the epoch once its loader was running, not
        // when one slow start (worker processes starting, a first fetch) makes most of the wait
        boolean waits = last.steadyWaitShare() >= 0.1;
        if (last.dataLocal() && waits) {
            findings.add(String.format(Locale.ROOT,
                    CPU_BOUND + ": %.0f%% of the bytes read were on the local tier when asked for, yet the consumer waited %.0f%% "
                            + "of epoch %d (%.1f ms per step at p50). %s or make decoding cheaper.",
                    100 * last.readyShareBytes(), 100 * waitShare, last.epoch(), last.waitPerStepMillisP50(),
                    context.decodeWorkers() > 0 ? "Add decode workers (now " + context.decodeWorkers() + ")"
                            : "Add loader workers (a DataLoader's num_workers)"));
        }
        trends(epochs, context, findings);
        tail(epochs, context, findings);
        if (epochs.size() >= 2 && context.datasetBytes() > 0 && last.localHitRateBytes() < 0.75
                && last.egressBytes() >= 0.25 * context.datasetBytes()) {
            long needed = capacityNeeded(context);
            findings.add(String.format(Locale.ROOT,
                    "The working set outgrew the node: epoch %d still fetched %s of a %s dataset (%.0f%% of bytes from the local tier). "
                            + "A cache of %s (now %s) would keep egress after the first epoch under 10%% of the dataset.",
                    last.epoch(), Sizes.format(last.egressBytes()), Sizes.format(context.datasetBytes()), 100 * last.localHitRateBytes(),
                    Sizes.format(needed), Sizes.format(context.cacheBytes())));
        }
        if (last.egressRequests() > 0 && (double) last.throttled() / last.egressRequests() > 0.01) {
            findings.add(String.format(Locale.ROOT,
                    "The object store is throttling: %.1f%% of epoch %d's %d requests were answered SlowDown, and the governor is "
                            + "holding back to stay under the limit%s. Spread keys over more prefixes (S3 limits each prefix).",
                    100.0 * last.throttled() / last.egressRequests(), last.epoch(), last.egressRequests(),
                    context.governor().isEmpty() ? "" : " (" + context.governor() + ")"));
        }
        if (waits && !last.dataLocal() && last.egressRequests() > 0) {
            double now = Double.isNaN(context.readsInFlight()) ? context.fetchConcurrency() : context.readsInFlight();
            String inFlight = Double.isNaN(context.readsInFlight()) ? context.fetchConcurrency() + " reads in flight"
                    : String.format(Locale.ROOT, "%.1f reads in flight on average, %.0f%% of their time waiting for a first byte",
                            context.readsInFlight(), 100 * context.firstByteShare());
            // the loader delivered (1 - wait) of what the consumer could take: as many more reads at once close the gap
            long needed = (long) Math.ceil(Math.max(1, now) / Math.max(0.05, 1 - waitShare));
            findings.add(String.format(Locale.ROOT,
                    "The consumer waits on the object store: %.0f%% of epoch %d waiting, first byte at %.0f ms, %s. "
                            + "Raise fetch concurrency (about %d reads in flight would keep up: the loader's threads or workers, the daemon's "
                            + "prefetch-bytes and a tier with room for them) or read larger ranges.",
                    100 * waitShare, last.epoch(), last.firstByteMillisP50(), inFlight, needed));
        }
        if (findings.isEmpty()) {
            findings.add(String.format(Locale.ROOT,
                    NO_PROBLEM + " in epoch %d: %.0f%% of the bytes read were on the local tier when asked for, the consumer waited "
                            + "%.0f%% of its time (%.1f ms per step at p50), and it fetched %s from the object store.",
                    last.epoch(), 100 * last.readyShareBytes(), 100 * waitShare, last.waitPerStepMillisP50(), Sizes.format(last.egressBytes())));
        }
        long soFar = epochs.stream().mapToLong(EpochReport::egressBytes).sum();
        int remaining = Math.max(0, context.plannedEpochs() - epochs.size());
        long projected = soFar + remaining * last.egressBytes();
        findings.add(String.format(Locale.ROOT,
                PROJECTED + " for %d epochs: %s, about $%.2f at the configured prices (%s so far).",
                Math.max(context.plannedEpochs(), epochs.size()), Sizes.format(projected), projected * context.egressCostPerByte(),
                Sizes.format(soFar)));
        return findings;
    }

    /**
     * Rules on trends over the last three epochs (epoch 1, cold, is left out of hit-rate trends): a wait per
     * step rising each epoch, and a local hit rate falling each epoch while egress stays a real share of the
     * dataset (the working set is outgrowing the node before the level rule says so).
     */
    static void trends(List<EpochReport> epochs, Context context, List<String> findings) {
        int n = epochs.size();
        if (n >= 3) {
            EpochReport a = epochs.get(n - 3);
            EpochReport b = epochs.get(n - 2);
            EpochReport c = epochs.get(n - 1);
            if (a.waitPerStepMillisP50() < b.waitPerStepMillisP50() && b.waitPerStepMillisP50() < c.waitPerStepMillisP50()
                    && c.waitPerStepMillisP50() >= 1.0 && c.waitPerStepMillisP50() >= 1.5 * Math.max(0.1, a.waitPerStepMillisP50())) {
                findings.add(String.format(Locale.ROOT,
                        "The consumer's wait per step is rising epoch over epoch (%.1f, %.1f, %.1f ms at p50 in epochs %d to %d)%s.",
                        a.waitPerStepMillisP50(), b.waitPerStepMillisP50(), c.waitPerStepMillisP50(), a.epoch(), c.epoch(),
                        c.localHitRate() < b.localHitRate() ? ", with fewer local hits each epoch: the reads are leaving the node"
                                : ", with data as local as before: the consumer side (decoding, its host) is slowing down"));
            }
        }
        if (n >= 4 && context.datasetBytes() > 0) {
            EpochReport a = epochs.get(n - 3);
            EpochReport b = epochs.get(n - 2);
            EpochReport c = epochs.get(n - 1);
            if (a.localHitRate() > b.localHitRate() && b.localHitRate() > c.localHitRate() && a.localHitRate() - c.localHitRate() >= 0.05
                    && c.egressBytes() >= context.datasetBytes() / 10) {
                findings.add(String.format(Locale.ROOT,
                        "The local hit rate is falling epoch over epoch (%.0f%%, %.0f%%, %.0f%% in epochs %d to %d) while egress stays at %s: "
                                + "the working set is outgrowing the node's tier (%s).",
                        100 * a.localHitRate(), 100 * b.localHitRate(), 100 * c.localHitRate(), a.epoch(), c.epoch(),
                        Sizes.format(c.egressBytes()), Sizes.format(context.cacheBytes())));
            }
        }
    }

    /**
     * A tail: after the first epoch, most steps find their batch ready (p50 under a millisecond, or a tenth
     * of p99) yet the slowest 1% wait 20 ms or more, and the tier did not hold every byte: the misses the
     * plan saw coming were fetched too late, while the reads in flight leave room for more. Prefetch is too
     * shallow; the finding says what to raise.
     */
    static void tail(List<EpochReport> epochs, Context context, List<String> findings) {
        if (epochs.size() < 2) {
            return;
        }
        EpochReport last = epochs.get(epochs.size() - 1);
        double p50 = last.waitPerStepMillisP50();
        double p99 = last.waitPerStepMillisP99();
        boolean room = Double.isNaN(context.readsInFlight()) || context.readsInFlight() < 0.75 * context.fetchConcurrency();
        if (p99 >= 20 && (p50 < 1 || p99 >= 10 * p50) && last.readyShareBytes() < 0.999 && room) {
            findings.add(String.format(Locale.ROOT,
                    "Waits have a tail: in epoch %d most steps found their batch ready (%.1f ms at p50) but the slowest 1%% waited "
                            + "%.0f ms, on reads the plan knew were coming%s. Prefetch is too shallow: raise the read-ahead "
                            + "(the daemon's prefetch-bytes, the loader's aheadSamples) so misses are fetched before they are needed.",
                    last.epoch(), p50, p99, Double.isNaN(context.readsInFlight()) ? ""
                            : String.format(Locale.ROOT, ", with %.1f reads in flight on average of %d allowed", context.readsInFlight(),
                                    context.fetchConcurrency())));
        }
    }

    /** One epoch of a multi-node job, as the partition rules read it, with what its egress cost. */
    public record PartitionEpoch(int epoch, long egressBytes, double localHitRate, double globalBatchShardMix, double egressCostUsd) {
    }

    /**
     * The job the partition rules judge: its plan's partition, its nodes, its dataset, each node's local tier
     * ({@code tierBytesPerNode}, 0 when unknown), and whether the epochs are one node's ({@code perNode}: a
     * daemon's view, compared with that node's share) or the whole cluster's.
     */
    public record Cluster(String partition, int nodes, long datasetBytes, long tierBytesPerNode, boolean perNode) {
    }

    /**
     * The partition rules: with the global plan, an epoch after the first that still fetches more than the
     * dataset says every node is reading a share of every shard, which the node partition would read once;
     * with the node partition, a global batch that meets under a quarter of the shards a uniform shuffle would
     * says mixing is low (raise the shuffle block or the canonical node count), and later epochs that still
     * fetch while each tier holds less than a node's share say how much more tier (or a shared tier) ends that
     * egress, and what it saves per epoch. The local hit rate is no guide there: a node's reads can hit its
     * tier 99% of the time while a third of its share streams through it every epoch. Pure.
     */
    public static List<String> partition(Cluster cluster, List<PartitionEpoch> epochs) {
        List<String> findings = new ArrayList<>();
        int nodes = cluster.nodes();
        if (epochs.isEmpty() || nodes < 2) {
            return findings;
        }
        String of = cluster.perNode() ? "this node's share of the" : "the";
        long share = cluster.datasetBytes() / nodes;
        long reference = cluster.perNode() ? share : cluster.datasetBytes();
        PartitionEpoch last = epochs.get(epochs.size() - 1);
        boolean later = epochs.size() >= 2;
        if (cluster.partition().equals("global") && later && last.egressBytes() > 1.5 * reference) {
            findings.add(String.format(Locale.ROOT,
                    "The global plan has every node read a share of every shard: epoch %d fetched %s, %.1fx " + of + " %s dataset, with %.0f%% "
                            + "local hits. The node partition (partition: node) keeps each shard on one node: the corpus leaves the object "
                            + "store once, then each node reads its own disk.",
                    last.epoch(), Sizes.format(last.egressBytes()), (double) last.egressBytes() / reference, Sizes.format(reference),
                    100 * last.localHitRate()));
        }
        if (cluster.partition().equals("node") && last.globalBatchShardMix() < 0.25) {
            findings.add(String.format(Locale.ROOT,
                    "Global batches meet %.0f%% of the distinct shards a uniform shuffle would (epoch %d). If the model needs more mixing, "
                            + "raise shuffle_block_shards or canonical_nodes (a multiple of the node count): each node then reads more of its "
                            + "shards at once (its local tier must hold them); mix_fraction changes which shards meet, not how many.",
                    100 * last.globalBatchShardMix(), last.epoch()));
        }
        long tier = cluster.tierBytesPerNode();
        boolean tierKnownShort = tier <= 0 || tier < share;
        if (cluster.partition().equals("node") && later && tierKnownShort && last.egressBytes() > reference / 20) {
            long needed = share / 20 * 21; // a share, and the room the tier holds for blocks in flight
            String more = tier > 0
                    ? String.format(Locale.ROOT, "About %s more local tier per node (%s each, now %s), or a shared tier of %s beside the "
                            + "nodes' (the dataset less all their tiers),", Sizes.format(Math.max(0, needed - tier)), Sizes.format(needed),
                            Sizes.format(tier), Sizes.format(Math.max(0, cluster.datasetBytes() - tier * nodes)))
                    : String.format(Locale.ROOT, "A local tier of about %s per node,", Sizes.format(needed));
            findings.add(String.format(Locale.ROOT,
                    "The local tiers are smaller than each node's share (%s): epoch %d still fetched %s though %.0f%% of reads hit the "
                            + "local tier, and each later epoch will fetch about as much. %s would bring later epochs' egress to zero, saving "
                            + "%s (about $%.2f) per epoch%s. Evicting by the plan (min) keeps it near the dataset less the tiers until then.",
                    Sizes.format(share), last.epoch(), Sizes.format(last.egressBytes()), 100 * last.localHitRate(), more,
                    Sizes.format(last.egressBytes()), last.egressCostUsd(), cluster.perNode() ? " on this node" : ""));
        }
        return findings;
    }

    /** The smallest cache (to 1/64 of the dataset) whose predicted steady-state egress is under 10% of the dataset. */
    static long capacityNeeded(Context context) {
        long dataset = context.datasetBytes();
        long step = Math.max(1, dataset / 64);
        long low = 0;
        long high = dataset;
        while (high - low > step) {
            long mid = low + (high - low) / 2;
            if (context.predictedSteadyEgressAtCapacity().applyAsLong(mid) <= dataset / 10) {
                high = mid;
            } else {
                low = mid;
            }
        }
        return high;
    }
}
