package dev.ferry.sim;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.policy.EvictionPolicy;
import dev.ferry.cache.policy.LruPolicy;
import dev.ferry.cache.policy.PreferringPolicy;
import dev.ferry.cache.policy.SievePolicy;
import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.Prices;
import dev.ferry.store.Rendezvous;
import java.util.ArrayList;
import java.util.List;

/**
 * Many nodes reading one corpus, each with its own local tier, optionally in a regional group: a node's
 * read of an object another member owns goes to that member's tier (which fetches from the origin once and
 * keeps what it owns first), as {@code ferry serve --group} does. It replays the shipped epoch plans
 * ({@link EpochPlan}: node {@code n} takes global positions {@code n, n + N, ...}) through instances of the
 * shipped policy classes, with the daemon's admission rule ({@link PreferringPolicy}: copies of blocks
 * another member owns only in free room) and the local tier's watermarks, and predicts the four numbers
 * per epoch.
 *
 * <p><b>Scale by sampling.</b> Large corpora are simulated on a spatial sample of their objects, as SHARDS
 * does for miss-ratio curves (Waldspurger et al., FAST '15): an object is in the sample when a hash of its
 * key falls under the rate, every cache is scaled by the same rate, and byte and sample counts are scaled
 * back. The sample is the same objects on every node, so each object's whole history is simulated. The
 * hit rates are estimates whose error grows as the sample shrinks (a few hundred blocks per cache is the
 * practical floor). In a group, a sample leaves some members owning far more than their even share of the
 * sampled bytes (a few objects each, where the full corpus gives each member thousands); such a member's
 * cache is scaled up by the same factor (stratified capacity), so owned bytes against cache stay as in the
 * full cluster.
 *
 * <p><b>Time</b> is a model, not a replay: per node and epoch, reading takes local bytes at local bandwidth
 * plus peer bytes at peer bandwidth plus origin bytes at the node's share of origin bandwidth (and each
 * origin request its first-byte latency, {@code concurrency} at a time), bounded below by the per-prefix
 * request limit; the loader's read-ahead overlaps reading with the consumer's steps, so an epoch takes the
 * longer of the two, and the difference, spread over the steps, is the wait per step (a mean, not a p99).
 */
public final class ClusterSim {
    private ClusterSim() {
    }

    /** The machines and network the model assumes. */
    public record TimeModel(double stepSeconds, int batchSize, double firstByteSeconds, double originBytesPerSecond,
            double nodeOriginBytesPerSecond, double peerBytesPerSecond, double localBytesPerSecond, double prefixRequestsPerSecond,
            int prefixes, int concurrency) {
        /** Defaults: S3-like origin (30 ms, 100 Gb/s aggregate, 5 Gb/s per node, 5,500 GET/s per prefix), 25 Gb/s peers, NVMe. */
        public static TimeModel defaults(double stepSeconds, int batchSize) {
            return new TimeModel(stepSeconds, batchSize, 0.030, 12.5e9, 0.625e9, 3.1e9, 3.0e9, 5500, 16, 64);
        }
    }

    /**
     * @param members the group's member names, which decide ownership (a real group's daemon URLs, to
     *                simulate that group); null for {@code node-0 ... node-(N-1)}
     */
    public record Config(int nodes, long cachePerNode, int blockSize, int epochs, String policy, boolean group, double sampleRate,
            PlanConfig plan, TimeModel time, Prices prices, List<String> members) {
        public Config {
            if (members != null && members.size() != nodes) {
                throw new IllegalArgumentException("need one member name per node: " + members.size() + " for " + nodes);
            }
            if (nodes < 1 || epochs < 1 || blockSize < 1 || cachePerNode < 0) {
                throw new IllegalArgumentException("nodes, epochs and block size must be positive, cache not negative");
            }
            if (!(sampleRate > 0 && sampleRate <= 1)) {
                throw new IllegalArgumentException("sample rate must be in (0, 1]: " + sampleRate);
            }
            if (!List.of("lru", "sieve").contains(policy)) {
                throw new IllegalArgumentException("the cluster simulator runs lru or sieve, not '" + policy + "'");
            }
        }
    }

    /** One epoch, for the whole cluster (counts scaled back from the sample). */
    public record Epoch(int epoch, long samples, long blockReads, long readerLocalHits, long readerPeerHits, long cacheHits, long cacheMisses,
            long egressBytes, long peerBytes, long localBytes, double seconds, double samplesPerSecond, double waitPerStepMillis,
            double egressCostUsd) {
        /** Hits over accesses at every cache, the readers' and (in a group) the owners' serving peers: what the daemons report. */
        public double cacheHitRate() {
            return cacheHits + cacheMisses == 0 ? 0 : (double) cacheHits / (cacheHits + cacheMisses);
        }

        /** The share of the readers' block reads served by their own node. */
        public double readerLocalRate() {
            return blockReads == 0 ? 0 : (double) readerLocalHits / blockReads;
        }

        /** The share served by a peer (the owner, in a group). */
        public double readerPeerRate() {
            return blockReads == 0 ? 0 : (double) readerPeerHits / blockReads;
        }
    }

    /** Whether an object is in a sample of {@code rate}: a stable hash of its key under the rate. */
    public static boolean sampled(ObjectKey key, double rate) {
        if (rate >= 1) {
            return true;
        }
        long h = Rendezvous.hashOf(Rendezvous.keyOf(key)) >>> 11; // 53 random bits
        return h < rate * (1L << 53);
    }

    /** The sampled part of a manifest (all of it at rate 1). */
    public static Manifest sample(Manifest manifest, double rate) {
        List<Shard> kept = manifest.shards().stream().filter(s -> sampled(s.key(), rate)).toList();
        if (kept.isEmpty()) {
            throw new IllegalArgumentException("a sample rate of " + rate + " keeps none of the " + manifest.shards().size() + " objects");
        }
        return new Manifest(kept);
    }

    /**
     * The sampled part of a synthetic corpus of {@code datasetBytes} in objects of {@code shardBytes} with
     * {@code samplesPerShard} equal samples each, without building the whole manifest: objects are named
     * {@code s3://corpus/train/shard-NNNNNNNN.tar} and kept when {@link #sampled} says so.
     */
    public static Manifest syntheticSample(long datasetBytes, long shardBytes, int samplesPerShard, double rate) {
        long count = Math.max(1, (datasetBytes + shardBytes - 1) / shardBytes);
        List<Shard> kept = new ArrayList<>();
        for (long i = 0; i < count; i++) {
            ObjectKey key = ObjectKey.of("corpus", String.format(java.util.Locale.ROOT, "train/shard-%08d.tar", i));
            if (sampled(key, rate)) {
                kept.add(new Shard(key, Math.min(shardBytes, datasetBytes - i * shardBytes), "sim", samplesPerShard));
            }
        }
        if (kept.isEmpty()) {
            throw new IllegalArgumentException("a sample rate of " + rate + " keeps none of the " + count + " objects: raise it");
        }
        return new Manifest(kept);
    }

    /** A sample rate that simulates about {@code targetReads} sample reads per epoch (1 for small corpora). */
    public static double autoRate(long datasetBytes, long shardBytes, int samplesPerShard, long targetReads) {
        double samples = (double) Math.max(1, datasetBytes / shardBytes) * samplesPerShard;
        return Math.min(1, targetReads / samples);
    }

    private static EvictionPolicy<BlockId> policy(String name) {
        return name.equals("sieve") ? new SievePolicy<>() : new LruPolicy<>();
    }

    /** Runs the epochs over {@code sampled} (a manifest already sampled at {@code config.sampleRate()}). */
    public static List<Epoch> run(Manifest sampled, Config config) {
        int n = config.nodes();
        long scaledCache = (long) (config.cachePerNode() * config.sampleRate());
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add(config.members() != null ? config.members().get(i) : "node-" + i);
        }
        Rendezvous ring = new Rendezvous(names);
        java.util.Map<ObjectKey, Integer> owners = new java.util.HashMap<>();
        for (Shard s : sampled.shards()) {
            owners.put(s.key(), ring.owner(Rendezvous.keyOf(s.key()))); // once per object: O(members) each
        }
        // Stratified capacity: in a sample, a member may own far more (or less) than its 1/N share of the
        // sampled bytes, where the whole corpus would spread evenly; its cache is scaled by the same factor,
        // so that what it owns compared to what it can keep is as in the full cluster.
        long[] owned = new long[n];
        for (Shard s : sampled.shards()) {
            owned[owners.get(s.key())] += s.size();
        }
        double meanOwned = (double) sampled.totalBytes() / n;
        List<SimCache<BlockId>> caches = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int node = i;
            EvictionPolicy<BlockId> p = policy(config.policy());
            long capacity = scaledCache;
            if (config.group()) {
                p = new PreferringPolicy<>(p, id -> owners.get(id.key()) == node);
                if (config.sampleRate() < 1) {
                    capacity = (long) (scaledCache * Math.max(1, owned[i] / meanOwned));
                }
            }
            caches.add(new SimCache<>(p, capacity));
        }
        double scale = 1 / config.sampleRate();
        List<Epoch> out = new ArrayList<>();
        for (int epoch = 1; epoch <= config.epochs(); epoch++) {
            EpochPlan plan = EpochPlan.of(sampled, config.plan(), epoch);
            long hitsBefore = caches.stream().mapToLong(c -> c.hits).sum();
            long missesBefore = caches.stream().mapToLong(c -> c.misses).sum();
            long blockReads = 0;
            long localHits = 0;
            long peerHits = 0;
            long egress = 0;
            long peerBytes = 0;
            long localBytes = 0;
            long originRequests = 0;
            long samples = plan.size();
            for (long position = 0; position < plan.size(); position++) {
                int node = (int) (position % n);
                int sample = plan.sampleAt(position);
                Shard shard = sampled.shards().get(plan.shardOf(sample));
                long from = shard.sampleOffset(plan.indexInShard(sample));
                long to = shard.sampleOffset(plan.indexInShard(sample) + 1);
                int owner = config.group() ? owners.get(shard.key()) : node;
                for (long b = from / config.blockSize(); to > from && b <= (to - 1) / config.blockSize(); b++) {
                    BlockId id = new BlockId(shard.key(), shard.etag(), b);
                    long blockLength = Math.min(config.blockSize(), shard.size() - b * config.blockSize());
                    long wanted = Math.min(to, b * config.blockSize() + blockLength) - Math.max(from, b * config.blockSize());
                    blockReads++;
                    SimCache<BlockId> local = caches.get(node);
                    if (local.access(id, blockLength)) {
                        localHits++;
                        localBytes += wanted;
                        continue;
                    }
                    boolean keptLocally = local.contains(id);
                    long fetched = keptLocally ? blockLength : wanted; // a refused block is fetched only for the bytes wanted
                    if (owner == node) {
                        egress += fetched;
                        originRequests++;
                        continue;
                    }
                    SimCache<BlockId> ownerCache = caches.get(owner);
                    if (ownerCache.access(id, blockLength)) {
                        peerHits++;
                    } else {
                        egress += ownerCache.contains(id) ? blockLength : fetched;
                        originRequests++;
                    }
                    peerBytes += fetched;
                }
            }
            long hits = caches.stream().mapToLong(c -> c.hits).sum() - hitsBefore;
            long misses = caches.stream().mapToLong(c -> c.misses).sum() - missesBefore;
            TimeModel t = config.time();
            double perNode = 1.0 / n;
            double originShare = Math.min(t.nodeOriginBytesPerSecond(), t.originBytesPerSecond() / n);
            double read = localBytes * scale * perNode / t.localBytesPerSecond() + peerBytes * scale * perNode / t.peerBytesPerSecond()
                    + Math.max(egress * scale * perNode / originShare, originRequests * scale * perNode * t.firstByteSeconds() / t.concurrency());
            double throttle = originRequests * scale / (t.prefixRequestsPerSecond() * t.prefixes());
            double steps = Math.ceil(samples * scale / n / t.batchSize());
            double compute = steps * t.stepSeconds();
            double seconds = Math.max(compute, Math.max(read, throttle));
            double cost = config.prices().cost((long) (egress * scale), (long) (originRequests * scale), 0);
            out.add(new Epoch(epoch, (long) (samples * scale), (long) (blockReads * scale), (long) (localHits * scale),
                    (long) (peerHits * scale), (long) (hits * scale), (long) (misses * scale), (long) (egress * scale),
                    (long) (peerBytes * scale), (long) (localBytes * scale), seconds, samples * scale / seconds,
                    steps == 0 ? 0 : (seconds - compute) / steps * 1000, cost));
        }
        return out;
    }
}
