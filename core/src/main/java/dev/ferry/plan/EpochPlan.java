package dev.ferry.plan;

import dev.ferry.cache.BlockId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * One epoch's order of every sample, and who reads what: a pure function of (manifest, config, epoch), then
 * of the world and a resume position.
 *
 * <p><b>Canonical nodes.</b> The plan is defined over {@code C} canonical nodes ({@link PlanConfig#canonical()}:
 * 1 for the global partition). Shards are assigned to canonical nodes once, by a deterministic greedy that
 * balances samples, then bytes (largest shard first to the lightest node), so the assignment is the same in
 * every epoch: sticky. With a mix fraction, each epoch moves that share of every canonical node's shards to
 * the canonical node {@code d} further on (one {@code d} per epoch), and back the next epoch.
 *
 * <p><b>Order.</b> Each canonical node's shards are permuted; consecutive groups of
 * {@code shuffleBlockShards} of them form blocks; the samples of each block are permuted among themselves
 * (MosaicML Streaming's py1br). The epoch's order interleaves the canonical nodes' orders round by round:
 * position {@code q} is sample {@code q / C} of canonical node {@code q mod C} while every node has samples
 * left, then the rounds go on over the nodes that still have some. With one canonical node this is the
 * global plan: one order of all shards.
 *
 * <p><b>Who reads what</b> ({@link RankAssignment}). At every step the ranks of the world together take the next
 * {@code ranks} positions of the order, so after {@code t} steps the first {@code t * ranks} positions are
 * consumed, whatever the world: resuming on a different world is exact, the consumed prefix being a number.
 * Canonical node {@code c} lives on physical node {@code c mod nodes}, or where a world change moved it
 * ({@link CanonicalHomes}); within a step each node takes the
 * positions of its canonical nodes, its ranks in position order. When the node count divides {@code C},
 * every step gives every node exactly its ranks' share, so no read leaves its node; otherwise the positions
 * a node cannot take go, in order, to the nodes with ranks left over. Within a rank, batches go round robin
 * to its workers, as PyTorch's DataLoader assigns them.
 *
 * <p><b>Uneven counts.</b> With PAD, positions past the end wrap to the start of the order, so every rank
 * gets {@code ceil(remaining / ranks)} samples; with DROP, {@code floor}. Every rank steps equally often.
 *
 * <p>Immutable and thread-safe.
 */
public final class EpochPlan {
    private final Manifest manifest;
    private final PlanConfig config;
    private final int epoch;
    private final int canonical;
    private final int[] order;
    /** The canonical node of each position (null with one canonical node). */
    private final int[] canonicalAt;
    /** Where each round of the order starts (one sample of every canonical node with samples left), and the end; empty for one canonical node. */
    private final int[] roundStart;
    private final int[] shardOfSample;
    private final int[] firstSampleOfShard;
    /** The position of each sample in the order, made on first use. */
    private volatile int[] positions;

    private EpochPlan(Manifest manifest, PlanConfig config, int epoch) {
        this.manifest = manifest;
        this.config = config;
        this.epoch = epoch;
        this.canonical = config.canonical();
        List<Shard> shards = manifest.shards();
        int n = manifest.totalSamples();
        firstSampleOfShard = new int[shards.size() + 1];
        shardOfSample = new int[n];
        for (int s = 0, g = 0; s < shards.size(); s++) {
            firstSampleOfShard[s] = g;
            for (int i = 0; i < shards.get(s).samples(); i++) {
                shardOfSample[g++] = s;
            }
            firstSampleOfShard[s + 1] = g;
        }
        int[][] members = membersOf(manifest, config, epoch);
        int[][] orders = new int[canonical][];
        for (int c = 0; c < canonical; c++) {
            orders[c] = canonicalOrder(members[c], c);
        }
        order = new int[n];
        canonicalAt = canonical == 1 ? null : new int[n];
        // Round r takes sample r of every canonical node that has one, in node order. A node whose order is
        // spent leaves the rounds: the work is the samples plus the nodes, not the rounds times the nodes
        // (100,000 canonical nodes with every sample on one of them would otherwise loop 10^11 times).
        int[] live = new int[canonical];
        int count = 0;
        for (int c = 0; c < canonical; c++) {
            if (orders[c].length > 0) {
                live[count++] = c;
            }
        }
        int pos = 0;
        int[] starts = new int[canonical == 1 ? 0 : (count == 0 ? 1 : maxLength(orders) + 1)];
        int round = 0;
        for (; count > 0; round++) {
            if (canonicalAt != null) {
                starts[round] = pos;
            }
            int kept = 0;
            for (int i = 0; i < count; i++) {
                int c = live[i];
                if (canonicalAt != null) {
                    canonicalAt[pos] = c;
                }
                order[pos++] = orders[c][round];
                if (round + 1 < orders[c].length) {
                    live[kept++] = c;
                }
            }
            count = kept;
        }
        if (canonicalAt != null) {
            starts[round] = pos;
        }
        roundStart = starts;
    }

    private static int maxLength(int[][] orders) {
        int max = 0;
        for (int[] o : orders) {
            max = Math.max(max, o.length);
        }
        return max;
    }

    /** The plan of one epoch (1-based); {@code config} must be definite ({@link PlanConfig#forWorld}). */
    public static EpochPlan of(Manifest manifest, PlanConfig config, int epoch) {
        Objects.requireNonNull(manifest, "manifest is null");
        Objects.requireNonNull(config, "config is null");
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch must be at least 1: " + epoch);
        }
        return new EpochPlan(manifest, config, epoch);
    }

    /**
     * The sticky assignment: the canonical node of every shard (index into the manifest), the same in every
     * epoch. Largest shards (by samples, then bytes) first, each to the canonical node with the fewest
     * samples, then bytes, then the lowest number.
     */
    public static int[] assignment(Manifest manifest, int canonicalNodes) {
        List<Shard> shards = manifest.shards();
        int[] out = new int[shards.size()];
        if (canonicalNodes == 1) {
            return out;
        }
        Integer[] bySize = new Integer[shards.size()];
        for (int i = 0; i < bySize.length; i++) {
            bySize[i] = i;
        }
        Arrays.sort(bySize, (a, b) -> {
            int c = Integer.compare(shards.get(b).samples(), shards.get(a).samples());
            c = c != 0 ? c : Long.compare(shards.get(b).size(), shards.get(a).size());
            return c != 0 ? c : Integer.compare(a, b);
        });
        long[] samples = new long[canonicalNodes];
        long[] bytes = new long[canonicalNodes];
        PriorityQueue<Integer> lightest = new PriorityQueue<>(canonicalNodes, (a, b) -> {
            int c = Long.compare(samples[a], samples[b]);
            c = c != 0 ? c : Long.compare(bytes[a], bytes[b]);
            return c != 0 ? c : Integer.compare(a, b);
        });
        for (int c = 0; c < canonicalNodes; c++) {
            lightest.add(c);
        }
        for (int s : bySize) {
            int c = lightest.poll();
            out[s] = c;
            samples[c] += shards.get(s).samples();
            bytes[c] += shards.get(s).size();
            lightest.add(c);
        }
        return out;
    }

    /** The shards (manifest indexes, ascending) each canonical node reads in {@code epoch}, after mixing. */
    private static int[][] membersOf(Manifest manifest, PlanConfig config, int epoch) {
        int canonical = config.canonical();
        int[] home = assignment(manifest, canonical);
        int[] where = home.clone();
        if (canonical > 1 && config.mixFraction() > 0) {
            List<List<Integer>> own = new ArrayList<>();
            for (int c = 0; c < canonical; c++) {
                own.add(new ArrayList<>());
            }
            for (int s = 0; s < home.length; s++) {
                own.get(home[s]).add(s);
            }
            SplittableRandom random = new SplittableRandom(mix(config.seed(), epoch, -2));
            int shift = 1 + random.nextInt(canonical - 1);
            for (int c = 0; c < canonical; c++) {
                List<Integer> mine = own.get(c);
                int moves = (int) Math.round(config.mixFraction() * mine.size());
                long[] keys = new long[mine.size()];
                for (int i = 0; i < keys.length; i++) {
                    keys[i] = mix(config.seed(), epoch, -3 - mine.get(i)); // a random rank per shard, new each epoch
                }
                Integer[] byKey = new Integer[mine.size()];
                for (int i = 0; i < byKey.length; i++) {
                    byKey[i] = i;
                }
                Arrays.sort(byKey, (a, b) -> keys[a] != keys[b] ? Long.compare(keys[a], keys[b]) : Integer.compare(a, b));
                for (int i = 0; i < moves; i++) {
                    where[mine.get(byKey[i])] = (c + shift) % canonical;
                }
            }
        }
        int[] counts = new int[canonical];
        for (int c : where) {
            counts[c]++;
        }
        int[][] members = new int[canonical][];
        for (int c = 0; c < canonical; c++) {
            members[c] = new int[counts[c]];
        }
        int[] fill = new int[canonical];
        for (int s = 0; s < where.length; s++) {
            members[where[s]][fill[where[s]]++] = s;
        }
        return members;
    }

    /** One canonical node's order: its shards permuted, then its samples permuted within blocks of shards. */
    private int[] canonicalOrder(int[] shards, int c) {
        long seed = c == 0 ? config.seed() : mix(config.seed(), 0, Integer.MIN_VALUE + c); // node 0: the global plan's seeds
        int[] shardOrder = permutation(shards.length, new SplittableRandom(mix(seed, epoch, -1)));
        int total = 0;
        for (int s : shards) {
            total += firstSampleOfShard[s + 1] - firstSampleOfShard[s];
        }
        int[] out = new int[total];
        int pos = 0;
        int k = config.shuffleBlockShards();
        for (int b = 0; b * k < shardOrder.length; b++) {
            int blockStart = pos;
            int to = Math.min(shardOrder.length, (b + 1) * k);
            for (int i = b * k; i < to; i++) {
                int s = shards[shardOrder[i]];
                for (int g = firstSampleOfShard[s]; g < firstSampleOfShard[s + 1]; g++) {
                    out[pos++] = g;
                }
            }
            shuffle(out, blockStart, pos, new SplittableRandom(mix(seed, epoch, b)));
        }
        return out;
    }

    public int epoch() {
        return epoch;
    }

    public Manifest manifest() {
        return manifest;
    }

    public PlanConfig config() {
        return config;
    }

    /** The canonical nodes the plan is defined over (1: the global plan). */
    public int canonicalNodes() {
        return canonical;
    }

    /** Number of samples in the epoch's order (every sample once). */
    public int size() {
        return order.length;
    }

    /** The global sample id at a position of the order; positions past the end wrap (padding). */
    public int sampleAt(long position) {
        return order[(int) (position % order.length)];
    }

    /** The position of a global sample id in this epoch's order (its first, where padding repeats it). */
    public int positionOf(int sample) {
        int[] p = positions;
        if (p == null) {
            p = new int[order.length];
            for (int i = order.length - 1; i >= 0; i--) {
                p[order[i]] = i;
            }
            positions = p;
        }
        return p[sample];
    }

    /** The canonical node whose order holds a position (positions past the end wrap). */
    public int canonicalAt(long position) {
        return canonicalAt == null ? 0 : canonicalAt[(int) (position % order.length)];
    }

    /** The rounds of the order (one position per canonical node with samples left); 0 for the global plan. */
    int rounds() {
        return Math.max(0, roundStart.length - 1);
    }

    /** The first position of round {@code r} ({@code r == rounds()}: the end of the order). */
    int roundStart(int r) {
        return roundStart[r];
    }

    /** The round holding position {@code position} (within the order, no wrap). */
    int roundOf(long position) {
        int r = java.util.Arrays.binarySearch(roundStart, (int) position);
        return r >= 0 ? Math.min(r, rounds() - 1) : -r - 2;
    }

    /** The shard (index into the manifest) holding a sample. */
    public int shardOf(int sample) {
        return shardOfSample[sample];
    }

    /** A sample's index within its shard. */
    public int indexInShard(int sample) {
        return sample - firstSampleOfShard[shardOfSample[sample]];
    }

    /** Steps every rank takes from {@code start} (a count of samples already consumed) with {@code ranks} ranks. */
    public int steps(long start, int ranks) {
        checkStart(start, ranks);
        long remaining = order.length - start;
        long steps = config.uneven() == PlanConfig.Uneven.PAD ? (remaining + ranks - 1) / ranks : remaining / ranks;
        return (int) steps;
    }

    /** Who reads which position on {@code world}, resuming after {@code start} consumed samples, canonical node {@code c} on node {@code c mod nodes}. */
    public RankAssignment deal(World world, long start) {
        CanonicalHomes standard = CanonicalHomes.of(canonical, world.nodes());
        return new RankAssignment(this, world, start, standard, standard);
    }

    /** Who reads which position on {@code world} from {@code start}, with the canonical nodes where {@code homes} put them. */
    public RankAssignment deal(World world, long start, CanonicalHomes homes) {
        return deal(world, start, homes, homes);
    }

    /**
     * Who reads which position on {@code world} from {@code start}, with the canonical nodes where {@code homes}
     * put them, the round in progress at {@code start} read in the order of {@code roundHomes} (the world that
     * began it, which a checkpoint records: {@link RankAssignment#roundHomesAt}).
     */
    public RankAssignment deal(World world, long start, CanonicalHomes homes, CanonicalHomes roundHomes) {
        Objects.requireNonNull(homes, "homes is null");
        Objects.requireNonNull(roundHomes, "roundHomes is null");
        if (homes.canonical() != canonical || homes.nodes() != world.nodes()) {
            throw new IllegalArgumentException("homes of " + homes.canonical() + " canonical nodes on " + homes.nodes() + " nodes do not fit a plan of "
                    + canonical + " canonical nodes on " + world.nodes() + " nodes");
        }
        if (roundHomes.canonical() != canonical) {
            throw new IllegalArgumentException("the round's homes are of " + roundHomes.canonical() + " canonical nodes, the plan's " + canonical);
        }
        return new RankAssignment(this, world, start, homes, roundHomes);
    }

    /** The samples rank {@code rank} of {@code world} reads, in order, resuming after {@code start} consumed samples. */
    public int[] rankSamples(World world, int rank, long start) {
        checkRank(rank, world.ranks());
        return deal(world, start).rankSamples(rank);
    }

    /**
     * The samples one loader worker of a rank produces: the rank's batches of {@code batchSize} go round robin
     * to its {@code workers} workers (the last batch may be short).
     */
    public int[] workerSamples(World world, int rank, int worker, int workers, int batchSize, long start) {
        checkRank(rank, world.ranks());
        return workerSamples(deal(world, start), rank, worker, workers, batchSize);
    }

    /** As {@link #workerSamples(World, int, int, int, int, long)}, for a deal of this plan (its world, start and homes). */
    public int[] workerSamples(RankAssignment deal, int rank, int worker, int workers, int batchSize) {
        checkRank(rank, deal.world().ranks());
        if (workers < 1 || worker < 0 || worker >= workers) {
            throw new IllegalArgumentException("worker must be 0 to " + (workers - 1) + ": " + worker);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1: " + batchSize);
        }
        int[] mine = deal.rankSamples(rank);
        int[] out = new int[mine.length];
        int n = 0;
        for (int batch = worker; (long) batch * batchSize < mine.length; batch += workers) {
            int from = batch * batchSize;
            int to = Math.min(mine.length, from + batchSize);
            System.arraycopy(mine, from, out, n, to - from);
            n += to - from;
        }
        return Arrays.copyOf(out, n);
    }

    /**
     * The blocks one node will read, in the order its ranks will read them (step by step, its ranks in order),
     * from {@code start}: the future that plan-aware eviction and prefetch read. A shard without sample offsets
     * is taken to hold samples of equal size.
     */
    public List<BlockRead> nodeBlocks(World world, int node, int blockSize, long start) {
        if (node < 0 || node >= world.nodes()) {
            throw new IllegalArgumentException("node must be 0 to " + (world.nodes() - 1) + ": " + node);
        }
        if (blockSize < 1) {
            throw new IllegalArgumentException("blockSize must be positive: " + blockSize);
        }
        RankAssignment deal = deal(world, start);
        List<BlockRead> out = new ArrayList<>();
        for (int t = 0; t < deal.steps(); t++) {
            for (int local = 0; local < world.ranksPerNode(); local++) {
                addBlocks(deal.sample(node * world.ranksPerNode() + local, t), blockSize, out);
            }
        }
        return out;
    }

    /** The shards (manifest indexes) node {@code node} reads from {@code start}, in the order it first reads them. */
    public int[] nodeShards(World world, int node, long start) {
        return nodeShards(deal(world, start), node);
    }

    /** The shards (manifest indexes) node {@code node} of a deal of this plan reads, in the order it first reads them. */
    public int[] nodeShards(RankAssignment deal, int node) {
        World world = deal.world();
        LinkedHashSet<Integer> seen = new LinkedHashSet<>();
        for (int t = 0; t < deal.steps(); t++) {
            for (int local = 0; local < world.ranksPerNode(); local++) {
                seen.add(shardOf(deal.sample(node * world.ranksPerNode() + local, t)));
            }
        }
        return seen.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Appends the blocks one sample covers, in order, each with the bytes the sample wants of it. */
    public void addBlocks(int sample, int blockSize, List<BlockRead> out) {
        Shard shard = manifest.shards().get(shardOf(sample));
        long from = shard.sampleOffset(indexInShard(sample));
        long to = shard.sampleOffset(indexInShard(sample) + 1);
        for (long b = from / blockSize; to > from && b <= (to - 1) / blockSize; b++) {
            long blockStart = b * blockSize;
            long length = Math.min(to, blockStart + blockSize) - Math.max(from, blockStart);
            out.add(new BlockRead(new BlockId(shard.key(), shard.etag(), b), length));
        }
    }

    void checkStart(long start, int ranks) {
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be at least 1: " + ranks);
        }
        if (start < 0 || start > order.length) {
            throw new IllegalArgumentException("start must be 0 to " + order.length + " samples: " + start);
        }
    }

    static void checkRank(int rank, int ranks) {
        if (rank < 0 || rank >= ranks) {
            throw new IllegalArgumentException("rank must be 0 to " + (ranks - 1) + ": " + rank);
        }
    }

    private static int[] permutation(int n, SplittableRandom random) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        shuffle(p, 0, n, random);
        return p;
    }

    /** Fisher-Yates over {@code a[from, to)}. */
    private static void shuffle(int[] a, int from, int to, SplittableRandom random) {
        for (int i = to - 1; i > from; i--) {
            int j = from + random.nextInt(i - from + 1);
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    /** A seed for one purpose of one epoch: SplitMix64's finalizer over the three inputs. */
    static long mix(long seed, int epoch, int salt) {
        long z = seed * 0x9E3779B97F4A7C15L + epoch * 0xBF58476D1CE4E5B9L + salt * 0x94D049BB133111EBL;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
