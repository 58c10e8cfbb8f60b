package dev.ferry.serve.jobs;

import dev.ferry.cache.BlockId;
import dev.ferry.plan.RankAssignment;
import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.CanonicalHomes;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.plan.ShardMix;
import dev.ferry.plan.World;
import dev.ferry.store.ObjectKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A registered job: its plan (a manifest, seed, world and partition; or an explicit ordered list of objects per rank),
 * the samples each loader worker reads ({@link SampleRange}, cut into {@link Span}s for a worker's order), the blocks this
 * node will read (for prefetch and eviction), and what its consumers reported, an {@link EpochRecord} per epoch.
 * Thread-safe.
 */
public final class Job {
    /**
     * Where a planned job resumes from, as a checkpoint recorded it ({@code GET /_ferry/v1/jobs/{job}/checkpoint}):
     * which node each canonical node lived on ({@code homes}, for the node count of the world that recorded them),
     * and, for a checkpoint taken inside a round of the order, where ({@code epoch}, {@code position}) and whose
     * order that round follows ({@code roundHomes}: the world that began it). {@code epoch} 0: no position (the
     * homes alone, as a registration answered them).
     */
    public record Resume(CanonicalHomes homes, int epoch, long position, CanonicalHomes roundHomes) {
        public Resume {
            java.util.Objects.requireNonNull(homes, "homes is null");
            if (epoch < 0 || position < 0) {
                throw new IllegalArgumentException("need epoch >= 0 and position >= 0: " + epoch + ", " + position);
            }
            if (roundHomes != null && epoch == 0) {
                throw new IllegalArgumentException("the round's homes need the epoch and position of the round they apply to");
            }
            if (roundHomes != null && roundHomes.canonical() != homes.canonical()) {
                throw new IllegalArgumentException("the round's homes are of " + roundHomes.canonical() + " canonical nodes, the homes of "
                        + homes.canonical());
            }
        }

        /** Resuming from homes alone: no round in progress. */
        public static Resume of(CanonicalHomes homes) {
            return new Resume(homes, 0, 0, null);
        }
    }

    final String name;
    private final Manifest manifest;
    private final PlanConfig plan;
    private final World world;
    private final int node;
    private final int batchSize;
    private final List<List<SampleRange>> explicit;
    /** Where each canonical node lives on this job's world (null for an explicit job). */
    private final CanonicalHomes homes;
    /**
     * The round a resume began inside, read in the order of the world that began it (null: none, or that world's
     * homes are this one's): its epoch and a position in it, and those homes.
     */
    private final Resume inRound;
    /** Where the job resumes (epoch 0: from the start of epoch 1). */
    private final int resumeEpoch;
    private final long resumePosition;
    private RankAssignment resumedDeal;
    private final Map<Integer, EpochPlan> plans = new LinkedHashMap<>(4, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, EpochPlan> eldest) {
            return size() > 2;
        }
    };
    final List<EpochRecord> epochs = new ArrayList<>();

    private Job(String name, Manifest manifest, PlanConfig plan, World world, int node, int batchSize, List<List<SampleRange>> explicit,
            CanonicalHomes homes, Resume inRound, int resumeEpoch, long resumePosition) {
        this.homes = homes;
        this.inRound = inRound;
        this.resumeEpoch = resumeEpoch;
        this.resumePosition = resumePosition;
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
        return planned(name, manifest, plan, world, node, batchSize, null);
    }

    /**
     * A job following a plan that resumes from a checkpoint's homes ({@code resume}; null: a fresh job, canonical
     * node {@code c} on node {@code c mod nodes}): the homes for another node count are resized to this world,
     * moving only what must move ({@link CanonicalHomes#resized}).
     */
    public static Job planned(String name, Manifest manifest, PlanConfig plan, World world, int node, int batchSize, Resume resume) {
        PlanConfig definite = plan.forWorld(world);
        int canonical = definite.canonical();
        CanonicalHomes homes = CanonicalHomes.of(canonical, world.nodes());
        Resume inRound = null;
        if (resume != null) {
            CanonicalHomes recorded = resume.homes();
            if (recorded.canonical() != canonical) {
                throw new IllegalArgumentException("the checkpoint's homes list " + recorded.canonical() + " canonical nodes but the plan has "
                        + canonical + ": register with the checkpoint's canonical_nodes");
            }
            if (resume.epoch() > 0 && resume.position() > manifest.totalSamples()) {
                throw new IllegalArgumentException("the checkpoint's position " + resume.position() + " is past the end of an epoch ("
                        + manifest.totalSamples() + " samples)");
            }
            homes = recorded.nodes() == world.nodes() ? recorded : recorded.resized(world.nodes());
            if (resume.epoch() > 0) {
                CanonicalHomes round = resume.roundHomes() != null ? resume.roundHomes() : recorded;
                if (!round.equals(homes)) {
                    inRound = new Resume(recorded, resume.epoch(), resume.position(), round);
                }
            }
        }
        return new Job(name, manifest, definite, world, node, batchSize, null, homes, inRound, resume == null ? 0 : resume.epoch(),
                resume == null ? 0 : resume.position());
    }

    /** The epoch the job starts in: its resume's, else 1. */
    int firstEpoch() {
        return Math.max(1, resumeEpoch);
    }

    /** The samples of {@link #firstEpoch} the whole job consumed before it was registered (its resume's position). */
    long firstPosition() {
        return resumeEpoch > 0 ? resumePosition : 0;
    }

    /** Where each canonical node lives on this job's world, or null for an explicit job. */
    public CanonicalHomes homes() {
        return homes;
    }

    /**
     * Whose order the round in progress after {@code position} samples of {@code epoch} follows, for a checkpoint
     * taken there: this job's homes, or, inside the round a resume began in, those of the world that began it.
     */
    public CanonicalHomes roundHomesAt(int epoch, long position) {
        if (inRound == null || epoch != inRound.epoch()) {
            return homes;
        }
        return resumedDeal().roundHomesAt(position);
    }

    private synchronized RankAssignment resumedDeal() {
        if (resumedDeal == null) {
            resumedDeal = epochPlan(inRound.epoch()).deal(world, inRound.position(), homes, inRound.roundHomes());
        }
        return resumedDeal;
    }

    /** Who reads which position of {@code epoch} from {@code start} on this job's world, with its homes. */
    RankAssignment deal(int epoch, long start) {
        EpochPlan p = epochPlan(epoch);
        return p.deal(world, start, homes, roundHomesAt(epoch, start));
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
            return explicit.stream().flatMap(List::stream).mapToLong(SampleRange::length).sum();
        }
        synchronized (nodeBytes) {
            return nodeBytes.computeIfAbsent(epoch, e -> {
                long bytes = 0;
                for (int s : epochPlan(e).nodeShards(deal(e, 0), node)) {
                    bytes += manifest.shards().get(s).size();
                }
                return bytes;
            });
        }
    }

    private final Map<Integer, Long> nodeBytes = new HashMap<>();

    /**
     * The shards this node is home to under the node partition (sticky: canonical node c lives on its home,
     * c mod nodes unless a resume moved it), as object keys; empty for the global plan or an explicit job.
     */
    java.util.Set<ObjectKey> homedShards() {
        if (manifest == null || plan.canonical() == 1) {
            return java.util.Set.of();
        }
        int[] home = EpochPlan.assignment(manifest, plan.canonical());
        java.util.Set<ObjectKey> out = new java.util.HashSet<>();
        for (int s = 0; s < home.length; s++) {
            if (homes.nodeOf(home[s]) == node) {
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
            if (homes != null && other.homes != null && !homes.equals(other.homes)) {
                out.add("homes " + java.util.Arrays.toString(homes.toArray()) + " here, " + java.util.Arrays.toString(other.homes.toArray())
                        + " asked (the node of each canonical node, from the checkpoint's homes)");
            }
            if (other.inRound != null && !sameRound(inRound, other.inRound)) {
                out.add(inRound == null ? "no round resumed in another world's order here, one of epoch " + other.inRound.epoch() + " asked"
                        : "the round resumed in another world's order is in epoch " + inRound.epoch() + " with homes "
                                + java.util.Arrays.toString(inRound.roundHomes().toArray()) + " here, epoch " + other.inRound.epoch()
                                + " with homes " + java.util.Arrays.toString(other.inRound.roundHomes().toArray()) + " asked");
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

    /** Whether two resumes inside a round follow the same world's order in the same epoch (positions in one round agree). */
    private static boolean sameRound(Resume a, Resume b) {
        return a != null && a.epoch() == b.epoch() && a.roundHomes().equals(b.roundHomes());
    }

    /** A world as {@code nodes x ranks_per_node x workers_per_rank}. */
    private static String shape(World w) {
        return w.nodes() + "x" + w.ranksPerNode() + "x" + w.workersPerRank() + " (nodes x ranks_per_node x workers_per_rank)";
    }

    /** A job reading whole objects in a given order per rank, every epoch alike. */
    static Job explicit(String name, List<List<SampleRange>> ranks, int batchSize) {
        return new Job(name, null, null, new World(1, ranks.size(), 1), 0, batchSize, ranks, null, null, 0, 0);
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

    /**
     * When {@code sample}, read in {@code epoch}, is read next: an ordinal that counts the job's samples epoch after
     * epoch (its position in the next epoch's order). A job without a plan reads it somewhere in the next epoch: the
     * middle of it is said.
     */
    long nextUse(int epoch, int sample) {
        long n = samplesPerEpoch();
        if (manifest == null || sample < 0 || sample >= n) {
            return (epoch + 1L) * n + n / 2;
        }
        return (epoch + 1L) * n + epochPlan(epoch + 1).positionOf(sample);
    }

    /** The samples this node's ranks read in an epoch (its share of the job's). */
    long nodeSamples() {
        return samplesPerEpoch() / Math.max(1, nodes());
    }

    /** The job's ranks on this node. */
    int ranksOnNode() {
        return Math.max(1, ranks() / Math.max(1, nodes()));
    }

    private synchronized EpochPlan epochPlan(int epoch) {
        return plans.computeIfAbsent(epoch, e -> EpochPlan.of(manifest, plan, e));
    }

    private SampleRange sample(EpochPlan p, int s) {
        Shard shard = manifest.shards().get(p.shardOf(s));
        int i = p.indexInShard(s);
        long from = shard.sampleOffset(i);
        return new SampleRange(s, shard.key(), from, shard.sampleOffset(i + 1) - from, shard.etag());
    }

    /** What worker {@code worker} of {@code workers} of a rank reads, in order: batches dealt round robin. */
    List<SampleRange> order(int epoch, int rank, int worker, int workers, long start) {
        if (rank < 0 || rank >= ranks()) {
            throw new IllegalArgumentException("rank must be 0 to " + (ranks() - 1) + ": " + rank);
        }
        if (manifest != null) {
            EpochPlan p = epochPlan(epoch);
            List<SampleRange> out = new ArrayList<>();
            for (int s : p.workerSamples(deal(epoch, start), rank, worker, workers, batchSize)) {
                out.add(sample(p, s));
            }
            return out;
        }
        if (workers < 1 || worker < 0 || worker >= workers) {
            throw new IllegalArgumentException("worker must be 0 to " + (workers - 1) + ": " + worker);
        }
        List<SampleRange> mine = explicit.get(rank);
        List<SampleRange> out = new ArrayList<>();
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
        RankAssignment deal = p != null ? deal(epoch, 0) : null;
        for (int t = 0; t < steps; t++) {
            stepStart[t] = blocks.size();
            for (int rank = fromNode * ranksPerNode; rank < toNode * ranksPerNode; rank++) {
                SampleRange s;
                if (p != null) {
                    s = sample(p, deal.sample(rank, t));
                } else {
                    List<SampleRange> mine = explicit.get(rank);
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
