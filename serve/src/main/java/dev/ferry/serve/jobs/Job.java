package dev.ferry.serve.jobs;

import dev.ferry.cache.BlockId;
import dev.ferry.plan.Deal;
import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.plan.ShardMix;
import dev.ferry.plan.World;
import dev.ferry.serve.node.Counters;
import dev.ferry.store.ObjectKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * A registered job: its plan (a manifest, seed, world and partition; or an explicit ordered list of objects per rank),
 * the samples each loader worker reads, the blocks this node will read (for prefetch and eviction), and
 * what its consumers reported: position, samples and wait per step, per epoch. Thread-safe.
 */
public final class Job {
    /** One sample to read: an object's byte range, pinned to a version when the ETag is known. */
    record Sample(int index, ObjectKey key, long offset, long length, String etag) {
    }

    /**
     * A run of consecutive samples of an order that read one object (the same key and ETag): what a client reads
     * in one ranged GET ({@code offset}, {@code length}: the bytes that cover every sample of the run) and splits.
     * The samples keep their order, which need not be the order of their bytes (a shuffled shard).
     */
    record Span(ObjectKey key, String etag, long offset, long length, List<Sample> samples) {
        Span {
            if (samples.isEmpty()) {
                throw new IllegalArgumentException("samples is empty");
            }
            samples = List.copyOf(samples);
        }

        /** The order cut into spans: concatenating their samples gives the order back. */
        static List<Span> of(List<Sample> order) {
            List<Span> out = new ArrayList<>();
            int from = 0;
            for (int i = 1; i <= order.size(); i++) {
                if (i == order.size() || !sameObject(order.get(from), order.get(i))) {
                    if (i > from) {
                        out.add(span(order.subList(from, i)));
                    }
                    from = i;
                }
            }
            return out;
        }

        private static boolean sameObject(Sample a, Sample b) {
            return a.key().equals(b.key()) && java.util.Objects.equals(a.etag(), b.etag());
        }

        private static Span span(List<Sample> run) {
            long start = Long.MAX_VALUE;
            long end = 0;
            for (Sample s : run) {
                start = Math.min(start, s.offset());
                end = Math.max(end, s.offset() + s.length());
            }
            Sample first = run.get(0);
            return new Span(first.key(), first.etag(), start, end - start, run);
        }
    }

    /** One epoch's record: what the consumers reported, and the daemon-wide counters when it began. */
    static final class Epoch {
        final int number;
        final long startNanos;
        final Histogram waits = new Histogram(3_600_000_000L, 2); // microseconds
        final Counters atStart;
        long samples;
        long steps;
        long waitTotalMicros;
        long lastReportNanos;
        long position;
        Counters atEnd;

        Epoch(int number, long startNanos, Counters atStart) {
            this.number = number;
            this.startNanos = startNanos;
            this.atStart = atStart;
            this.lastReportNanos = startNanos;
        }
    }

    final String name;
    private final Manifest manifest;
    private final PlanConfig plan;
    private final World world;
    private final int node;
    private final int batchSize;
    private final List<List<Sample>> explicit;
    private final Map<Integer, EpochPlan> plans = new LinkedHashMap<>(4, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, EpochPlan> eldest) {
            return size() > 2;
        }
    };
    final List<Epoch> epochs = new ArrayList<>();

    private Job(String name, Manifest manifest, PlanConfig plan, World world, int node, int batchSize, List<List<Sample>> explicit) {
        this.name = name;
        this.manifest = manifest;
        this.plan = plan;
        this.world = world;
        this.node = node;
        this.batchSize = batchSize;
        this.explicit = explicit;
    }

    /** A job following a plan, made definite for its world ({@link PlanConfig#forWorld}). */
    public static Job planned(String name, Manifest manifest, PlanConfig plan, World world, int node, int batchSize) {
        return new Job(name, manifest, plan.forWorld(world), world, node, batchSize, null);
    }

    private volatile int plannedEpochs;

    /** The epochs the job says it will run (0: not said), for the advisor's projection. */
    int plannedEpochs() {
        return plannedEpochs;
    }

    Job withPlannedEpochs(int epochs) {
        this.plannedEpochs = epochs;
        return this;
    }

    /** The manifest of a planned job, or null for an explicit one. */
    Manifest manifest() {
        return manifest;
    }

    World world() {
        return world;
    }

    /**
     * The bytes this node reads in an epoch: the sizes of the shards its deal touches (the whole dataset with
     * the global plan; about its share with the node partition); for an explicit job, the objects of its ranks.
     */
    long nodeBytes(int epoch) {
        if (manifest == null) {
            return explicit.stream().flatMap(List::stream).mapToLong(Sample::length).sum();
        }
        synchronized (nodeBytes) {
            return nodeBytes.computeIfAbsent(epoch, e -> {
                long bytes = 0;
                for (int s : epochPlan(e).nodeShards(world, node, 0)) {
                    bytes += manifest.shards().get(s).size();
                }
                return bytes;
            });
        }
    }

    private final Map<Integer, Long> nodeBytes = new HashMap<>();

    /**
     * The shards this node is home to under the node partition (sticky: canonical node c lives on node
     * c mod nodes), as object keys; empty for the global plan or an explicit job.
     */
    java.util.Set<ObjectKey> homedShards() {
        if (manifest == null || plan.canonical() == 1) {
            return java.util.Set.of();
        }
        int[] home = EpochPlan.assignment(manifest, plan.canonical());
        java.util.Set<ObjectKey> out = new java.util.HashSet<>();
        for (int s = 0; s < home.length; s++) {
            if (home[s] % world.nodes() == node) {
                out.add(manifest.shards().get(s).key());
            }
        }
        return out;
    }

    /** The plan's settings (definite), or null for an explicit job. */
    PlanConfig plan() {
        return plan;
    }

    /** The epoch plan's shuffle quality for this job's global batch (every rank's batch), or NaN for an explicit job. */
    double shardMix(int epoch) {
        if (manifest == null) {
            return Double.NaN;
        }
        synchronized (mixes) {
            return mixes.computeIfAbsent(epoch, e -> ShardMix.of(epochPlan(e), (int) Math.min(Integer.MAX_VALUE, (long) batchSize * ranks())));
        }
    }

    private final Map<Integer, Double> mixes = new HashMap<>();

    /**
     * What makes {@code other}, registered under this job's name, a different job: one phrase per field that
     * differs ({@code "seed 7 here, 8 asked"}), empty when every rank asked for the same plan. The manifest and
     * an explicit job's objects are compared whole, ETags included (an object rewritten in between makes
     * another job). Compares definitions only: what the consumers reported is not part of a job's identity.
     */
    List<String> differences(Job other) {
        List<String> out = new ArrayList<>();
        if ((manifest == null) != (other.manifest == null)) {
            out.add(manifest == null ? "an explicit list of objects per rank here, a manifest asked"
                    : "a manifest here, an explicit list of objects per rank asked");
            return out;
        }
        if (manifest != null) {
            if (!manifest.equals(other.manifest)) {
                out.add(manifest.shards().size() == other.manifest.shards().size() && manifest.totalSamples() == other.manifest.totalSamples()
                        ? "manifest (as many shards and samples, but other keys, sizes, ETags or sample offsets)"
                        : "manifest (" + manifest.shards().size() + " shards of " + manifest.totalSamples() + " samples here, "
                                + other.manifest.shards().size() + " of " + other.manifest.totalSamples() + " asked)");
            }
            if (plan.seed() != other.plan.seed()) {
                out.add("seed " + plan.seed() + " here, " + other.plan.seed() + " asked");
            }
            if (plan.partition() != other.plan.partition()) {
                out.add("partition " + plan.partition().label() + " here, " + other.plan.partition().label() + " asked");
            }
            if (plan.canonical() != other.plan.canonical()) {
                out.add("canonical_nodes " + plan.canonical() + " here, " + other.plan.canonical() + " asked");
            }
            if (plan.mixFraction() != other.plan.mixFraction()) {
                out.add("mix_fraction " + plan.mixFraction() + " here, " + other.plan.mixFraction() + " asked");
            }
            if (plan.shuffleBlockShards() != other.plan.shuffleBlockShards()) {
                out.add("shuffle_block_shards " + plan.shuffleBlockShards() + " here, " + other.plan.shuffleBlockShards() + " asked");
            }
            if (!plan.equals(other.plan) && out.isEmpty()) {
                out.add("plan settings (" + plan + " here, " + other.plan + " asked)");
            }
            if (!world.equals(other.world)) {
                out.add("world " + shape(world) + " here, " + shape(other.world) + " asked");
            }
            if (node != other.node) {
                out.add("node " + node + " here, " + other.node + " asked (each node's ranks register with their own node's daemon)");
            }
        } else if (!explicit.equals(other.explicit)) {
            out.add("ranks (other objects, order or ETags)");
        }
        if (batchSize != other.batchSize) {
            out.add("batch_size " + batchSize + " here, " + other.batchSize + " asked");
        }
        if (plannedEpochs != other.plannedEpochs) {
            out.add("epochs " + plannedEpochs + " here, " + other.plannedEpochs + " asked");
        }
        return out;
    }

    /** A world as {@code nodes x ranks_per_node x workers_per_rank}. */
    private static String shape(World w) {
        return w.nodes() + "x" + w.ranksPerNode() + "x" + w.workersPerRank() + " (nodes x ranks_per_node x workers_per_rank)";
    }

    /** A job reading whole objects in a given order per rank, every epoch alike. */
    static Job explicit(String name, List<List<Sample>> ranks, int batchSize) {
        return new Job(name, null, null, new World(1, ranks.size(), 1), 0, batchSize, ranks);
    }

    int ranks() {
        return world.ranks();
    }

    int batchSize() {
        return batchSize;
    }

    long samplesPerEpoch() {
        return manifest != null ? manifest.totalSamples() : explicit.stream().mapToLong(List::size).sum();
    }

    private synchronized EpochPlan epochPlan(int epoch) {
        return plans.computeIfAbsent(epoch, e -> EpochPlan.of(manifest, plan, e));
    }

    private Sample sample(EpochPlan p, int s) {
        Shard shard = manifest.shards().get(p.shardOf(s));
        int i = p.indexInShard(s);
        long from = shard.sampleOffset(i);
        return new Sample(s, shard.key(), from, shard.sampleOffset(i + 1) - from, shard.etag());
    }

    /** What worker {@code worker} of {@code workers} of a rank reads, in order: batches dealt round robin. */
    List<Sample> order(int epoch, int rank, int worker, int workers, long start) {
        if (rank < 0 || rank >= ranks()) {
            throw new IllegalArgumentException("rank must be 0 to " + (ranks() - 1) + ": " + rank);
        }
        if (manifest != null) {
            EpochPlan p = epochPlan(epoch);
            List<Sample> out = new ArrayList<>();
            for (int s : p.workerSamples(world, rank, worker, workers, batchSize, start)) {
                out.add(sample(p, s));
            }
            return out;
        }
        if (workers < 1 || worker < 0 || worker >= workers) {
            throw new IllegalArgumentException("worker must be 0 to " + (workers - 1) + ": " + worker);
        }
        List<Sample> mine = explicit.get(rank);
        List<Sample> out = new ArrayList<>();
        for (int batch = worker; (long) batch * batchSize < mine.size(); batch += workers) {
            out.addAll(mine.subList(batch * batchSize, Math.min(mine.size(), (batch + 1) * batchSize)));
        }
        return out;
    }

    /**
     * The blocks this node reads in an epoch, in order (its ranks step by step), and where each step starts
     * in that list: {@code stepStart[t]} is the index of step t's first block.
     */
    record NodeFuture(List<BlockId> blocks, int[] stepStart) {
        int indexOfPosition(long position, int ranks) {
            long step = position / ranks;
            return step >= stepStart.length ? blocks.size() : stepStart[(int) step];
        }
    }

    NodeFuture nodeFuture(int epoch, int blockSize) {
        return nodeFuture(epoch, blockSize, node);
    }

    int nodes() {
        return world.nodes();
    }

    int node() {
        return node;
    }

    /** The blocks node {@code node} of the job's world reads in an epoch, in order. */
    NodeFuture nodeFuture(int epoch, int blockSize, int node) {
        return future(epoch, blockSize, node, node + 1);
    }

    /** The blocks every node of the job's world reads in an epoch, step by step: a regional group's future. */
    NodeFuture groupFuture(int epoch, int blockSize) {
        return future(epoch, blockSize, 0, world.nodes());
    }

    private NodeFuture future(int epoch, int blockSize, int fromNode, int toNode) {
        List<BlockId> blocks = new ArrayList<>();
        int ranksPerNode = world.ranksPerNode();
        int steps;
        if (manifest != null) {
            steps = epochPlan(epoch).steps(0, ranks());
        } else {
            steps = explicit.stream().mapToInt(List::size).max().orElse(0);
        }
        int[] stepStart = new int[steps];
        EpochPlan p = manifest != null ? epochPlan(epoch) : null;
        Deal deal = p != null ? p.deal(world, 0) : null;
        for (int t = 0; t < steps; t++) {
            stepStart[t] = blocks.size();
            for (int rank = fromNode * ranksPerNode; rank < toNode * ranksPerNode; rank++) {
                Sample s;
                if (p != null) {
                    s = sample(p, deal.sample(rank, t));
                } else {
                    List<Sample> mine = explicit.get(rank);
                    if (t >= mine.size()) {
                        continue;
                    }
                    s = mine.get(t);
                }
                if (s.length() == 0) {
                    continue;
                }
                for (long b = s.offset() / blockSize; b <= (s.offset() + s.length() - 1) / blockSize; b++) {
                    blocks.add(new BlockId(s.key(), s.etag(), b));
                }
            }
        }
        return new NodeFuture(blocks, stepStart);
    }
}
