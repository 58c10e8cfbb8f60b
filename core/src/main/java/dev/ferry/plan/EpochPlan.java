package dev.ferry.plan;

import dev.ferry.cache.BlockId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * One epoch's order of every sample, and who reads what: a pure function of (manifest, config, epoch), then
 * of the world and a resume position.
 *
 * <p><b>Order.</b> Shards are permuted; consecutive groups of {@code shuffleBlockShards} shards form blocks;
 * the samples of each block are permuted among themselves. Readers thus have a few shards open at a time,
 * yet neighbouring shards' samples mix.
 *
 * <p><b>Who reads what.</b> Position {@code q} of the order goes to rank {@code (q - start) mod ranks}: at
 * every step each rank takes the next sample, so after {@code t} steps the first {@code t * ranks} positions
 * are consumed, whatever the world. That is what makes resuming with a different world size exact: the
 * consumed prefix is a number, and the rest is dealt again over the new ranks. Within a rank, batches go
 * round robin to its workers, as PyTorch's DataLoader assigns them.
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
    private final int[] order;
    private final int[] shardOfSample;
    private final int[] firstSampleOfShard;

    private EpochPlan(Manifest manifest, PlanConfig config, int epoch) {
        this.manifest = manifest;
        this.config = config;
        this.epoch = epoch;
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
        int[] shardOrder = permutation(shards.size(), new SplittableRandom(mix(config.seed(), epoch, -1)));
        order = new int[n];
        int pos = 0;
        for (int b = 0; b * config.shuffleBlockShards() < shardOrder.length; b++) {
            int blockStart = pos;
            int to = Math.min(shardOrder.length, (b + 1) * config.shuffleBlockShards());
            for (int k = b * config.shuffleBlockShards(); k < to; k++) {
                int s = shardOrder[k];
                for (int g = firstSampleOfShard[s]; g < firstSampleOfShard[s + 1]; g++) {
                    order[pos++] = g;
                }
            }
            shuffle(order, blockStart, pos, new SplittableRandom(mix(config.seed(), epoch, b)));
        }
    }

    /** The plan of one epoch (1-based). */
    public static EpochPlan of(Manifest manifest, PlanConfig config, int epoch) {
        Objects.requireNonNull(manifest, "manifest is null");
        Objects.requireNonNull(config, "config is null");
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch must be at least 1: " + epoch);
        }
        return new EpochPlan(manifest, config, epoch);
    }

    public int epoch() {
        return epoch;
    }

    public Manifest manifest() {
        return manifest;
    }

    /** Number of samples in the epoch's order (every sample once). */
    public int size() {
        return order.length;
    }

    /** The global sample id at a position of the order; positions past the end wrap (padding). */
    public int sampleAt(long position) {
        return order[(int) (position % order.length)];
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

    /** The samples rank {@code rank} of {@code ranks} reads, in order, resuming after {@code start} consumed samples. */
    public int[] rankSamples(int rank, int ranks, long start) {
        checkRank(rank, ranks);
        int steps = steps(start, ranks);
        int[] out = new int[steps];
        for (int t = 0; t < steps; t++) {
            out[t] = sampleAt(start + (long) t * ranks + rank);
        }
        return out;
    }

    /**
     * The samples one loader worker of a rank produces: the rank's batches of {@code batchSize} go round robin
     * to its {@code workers} workers (the last batch may be short).
     */
    public int[] workerSamples(int rank, int ranks, int worker, int workers, int batchSize, long start) {
        if (workers < 1 || worker < 0 || worker >= workers) {
            throw new IllegalArgumentException("worker must be 0 to " + (workers - 1) + ": " + worker);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1: " + batchSize);
        }
        int[] mine = rankSamples(rank, ranks, start);
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
        int ranks = world.ranks();
        int steps = steps(start, ranks);
        List<BlockRead> out = new ArrayList<>();
        for (int t = 0; t < steps; t++) {
            for (int local = 0; local < world.ranksPerNode(); local++) {
                int rank = node * world.ranksPerNode() + local;
                int sample = sampleAt(start + (long) t * ranks + rank);
                Shard shard = manifest.shards().get(shardOf(sample));
                long from = shard.sampleOffset(indexInShard(sample));
                long to = shard.sampleOffset(indexInShard(sample) + 1);
                if (to == from) {
                    continue;
                }
                for (long b = from / blockSize; b <= (to - 1) / blockSize; b++) {
                    long blockStart = b * blockSize;
                    long length = Math.min(to, blockStart + blockSize) - Math.max(from, blockStart);
                    out.add(new BlockRead(new BlockId(shard.key(), shard.etag(), b), length));
                }
            }
        }
        return out;
    }

    private void checkStart(long start, int ranks) {
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be at least 1: " + ranks);
        }
        if (start < 0 || start > order.length) {
            throw new IllegalArgumentException("start must be 0 to " + order.length + " samples: " + start);
        }
    }

    private static void checkRank(int rank, int ranks) {
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
