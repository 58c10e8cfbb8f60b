package dev.ferry.sim;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.policy.EvictionPolicy;
import dev.ferry.cache.policy.Policies;
import dev.ferry.cache.policy.PreferringPolicy;
import dev.ferry.plan.RankAssignment;
import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.plan.ShardMix;
import dev.ferry.plan.World;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.Prices;
import dev.ferry.store.shared.Rendezvous;
import java.util.ArrayList;
import java.util.List;

/**
 * Many nodes reading one corpus, each with its own local tier, optionally in a regional group: a node's
 * read of an object another member owns goes to that member's tier (which fetches from the origin once and
 * keeps what it owns first), as {@code ferry serve --group} does. It replays the shipped epoch plans in
 * either partition ({@link EpochPlan} and its {@link RankAssignment}: the node partition keeps each node on its own
 * shards, the global one deals every position round robin) through instances of the shipped policy classes
 * (LRU, SIEVE, or MIN fed each node's planned future, as the daemon's plan-aware eviction is), with the
 * daemon's admission rule ({@link PreferringPolicy}: copies of blocks another member owns only in free
 * room) and the local tier's watermarks, and predicts the four numbers per epoch, with the plan's shuffle
 * quality ({@link ShardMix}).
 *
 * <p><b>Scale by sampling.</b> Large corpora are simulated on a spatial sample of their objects, as SHARDS
 * does for miss-ratio curves (Waldspurger et al., FAST '15): an object is in the sample when a hash of its
 * key falls under the rate, every cache is scaled by the same rate, and byte and sample counts are scaled
 * back. The sample is the same objects on every node, so each object's whole history is simulated. The
 * hit rates are estimates whose error grows as the sample shrinks (a few hundred blocks per cache is the
 * practical floor). In a group, a sample leaves some members owning far more than their even share of the
 * sampled bytes (a few objects each, where the full corpus gives each member thousands); such a member's
 * cache is scaled up by the same factor (stratified capacity), so owned bytes against cache stay as in the
 * full cluster. The node partition does the same by simulating fewer nodes (see {@link #simulated}).
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
     * @param datasetBytes the whole corpus the sample was drawn from, when known (0: estimated as the sampled
     *                bytes over the rate). Knowing it, the run scales by what the sample actually holds against
     *                the corpus rather than by the nominal rate: 415 objects drawn where the rate expects 400
     *                would otherwise read as 4% more egress, and as tiers 4% smaller against a node's share.
     */
    public record Config(int nodes, long cachePerNode, int blockSize, int epochs, String policy, boolean group, double sampleRate,
            PlanConfig plan, TimeModel time, Prices prices, List<String> members, long datasetBytes) {
        /** A config without the corpus size (estimated from the sample and its rate). */
        public Config(int nodes, long cachePerNode, int blockSize, int epochs, String policy, boolean group, double sampleRate,
                PlanConfig plan, TimeModel time, Prices prices, List<String> members) {
            this(nodes, cachePerNode, blockSize, epochs, policy, group, sampleRate, plan, time, prices, members, 0);
        }

        public Config {
            if (datasetBytes < 0) {
                throw new IllegalArgumentException("datasetBytes must not be negative: " + datasetBytes);
            }
            if (members != null && members.size() != nodes) {
                throw new IllegalArgumentException("need one member name per node: " + members.size() + " for " + nodes);
            }
            if (nodes < 1 || epochs < 1 || blockSize < 1 || cachePerNode < 0) {
                throw new IllegalArgumentException("nodes, epochs and block size must be positive, cache not negative");
            }
            if (!(sampleRate > 0 && sampleRate <= 1)) {
                throw new IllegalArgumentException("sample rate must be in (0, 1]: " + sampleRate);
            }
            if (!List.of("lru", "sieve", "min").contains(policy)) {
                throw new IllegalArgumentException("the cluster simulator runs lru, sieve or min, not '" + policy + "'");
            }
        }
    }

    /** One epoch, for the whole cluster (counts scaled back from the sample). */
    public record Epoch(int epoch, long samples, long blockReads, long readerLocalHits, long readerPeerHits, long cacheHits, long cacheMisses,
            long egressBytes, long peerBytes, long localBytes, long originRequests, double seconds, double samplesPerSecond,
            double waitPerStepMillis, double egressCostUsd, double globalBatchShardMix, double localShare) {
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

    /**
     * The cluster the sampled run simulates: fewer nodes when a sample leaves too few shards per node for the
     * node partition; the objects it replays (the sample, trimmed to whole rounds of canonical nodes when nodes
     * are fewer); and the rate that scales caches and counts: what those objects hold against the corpus.
     */
    record Simulated(World world, PlanConfig plan, double[] capacityScale, Manifest manifest, double rate) {
    }

    /**
     * Under sampling, the node partition spreads the sampled shards over its canonical nodes: with far fewer
     * shards than nodes, most nodes would own nothing and read others' shards, which no full-size run does.
     * Nodes are independent in that partition (each reads its own shards), so a smaller cluster, each cache
     * scaled to what its node owns against a full node's share, answers for the full one. Each simulated node
     * owns at least 8 sampled shards, and enough that its scaled tier holds four shuffle blocks when the tier
     * is smaller than a share: a block is whole shards at any rate, so a node of a few sampled shards would
     * interleave its whole scaled tier at once, which the full node, holding hundreds of blocks, never does.
     *
     * <p>The sample is then trimmed to a multiple of the canonical node count (dropping fewer objects than there
     * are simulated nodes), so every simulated node owns as many shards. Otherwise the nodes of one shard more
     * read alone at the end of every epoch, and since every rank steps equally often, the others take their
     * surplus positions: reads away from home, each fetching a whole block for one sample. In the full cluster
     * that tail is one shard in a node's thousand; in a sample of 35 shards a node it is one in 35, and it made
     * the 1,000-node, 1 PiB run read 1.19x the corpus in epoch 1 and 1.6x the floor later (the same shape at full
     * scale: 1.00x and 1.09x). The global partition and groups keep every node and the whole sample.
     */
    static Simulated simulated(Manifest sampled, Config config) {
        PlanConfig plan = config.plan().forWorld(new World(config.nodes(), 1, 1));
        int nodes = config.nodes();
        Manifest manifest = sampled;
        if (plan.canonical() > 1 && config.sampleRate() < 1 && config.members() == null) {
            double fullShareBytes = (double) sampled.totalBytes() / rateOf(sampled, config) / nodes;
            double tierPerShare = Math.min(1, config.cachePerNode() / fullShareBytes);
            int shardsPerNode = (int) Math.max(8, Math.ceil(4.0 * plan.shuffleBlockShards() / Math.max(1e-9, tierPerShare)));
            int simNodes = Math.max(1, Math.min(nodes, sampled.shards().size() / shardsPerNode));
            int perNode = Math.max(1, plan.canonical() / nodes);
            if (simNodes < nodes) {
                plan = plan.withCanonicalNodes(simNodes * perNode);
                nodes = simNodes;
                int whole = sampled.shards().size() / plan.canonical() * plan.canonical();
                if (whole > 0 && whole < sampled.shards().size()) {
                    manifest = new Manifest(sampled.shards().subList(0, whole));
                }
            }
        }
        double rate = manifest == sampled ? rateOf(sampled, config)
                : rateOf(sampled, config) * manifest.totalBytes() / sampled.totalBytes();
        World world = new World(nodes, 1, 1);
        double[] scale = new double[nodes];
        java.util.Arrays.fill(scale, 1);
        if (nodes < config.nodes()) {
            long[] owned = new long[nodes];
            int[] home = EpochPlan.assignment(manifest, plan.canonical());
            for (int s = 0; s < home.length; s++) {
                owned[home[s] % nodes] += manifest.shards().get(s).size();
            }
            double fullShare = manifest.totalBytes() / rate / config.nodes();
            for (int i = 0; i < nodes; i++) {
                scale[i] = owned[i] / rate / fullShare; // this node's cache against a full node's, as owned against owned
            }
        }
        return new Simulated(world, plan, scale, manifest, rate);
    }

    /** The sample's share of the corpus: its bytes against the corpus when that is known, else the nominal rate. */
    private static double rateOf(Manifest sampled, Config config) {
        return config.datasetBytes() > 0 ? Math.min(1, (double) sampled.totalBytes() / config.datasetBytes()) : config.sampleRate();
    }

    /** How many nodes the run of {@code config} over {@code sampled} simulates (fewer than configured under sampling, see {@link #simulated}). */
    public static int simulatedNodes(Manifest sampled, Config config) {
        return simulated(sampled, config).world().nodes();
    }

    private static EvictionPolicy<BlockId> policy(String name, List<BlockId> future) {
        return Policies.create(name, future);
    }

    /** One node's block reads in an epoch, in the order of the deal (its steps in order). */
    private static void forEachRead(EpochPlan plan, RankAssignment deal, int blockSize, ReadSink sink) {
        Manifest m = plan.manifest();
        for (int t = 0; t < deal.steps(); t++) {
            for (int node = 0; node < deal.world().nodes(); node++) {
                int sample = deal.sample(node, t);
                int shardIndex = plan.shardOf(sample);
                Shard shard = m.shards().get(shardIndex);
                long from = shard.sampleOffset(plan.indexInShard(sample));
                long to = shard.sampleOffset(plan.indexInShard(sample) + 1);
                for (long b = from / blockSize; to > from && b <= (to - 1) / blockSize; b++) {
                    long blockLength = Math.min(blockSize, shard.size() - b * blockSize);
                    long wanted = Math.min(to, b * blockSize + blockLength) - Math.max(from, b * blockSize);
                    sink.read(node, shardIndex, new BlockId(shard.key(), shard.etag(), b), blockLength, wanted);
                }
            }
        }
    }

    private interface ReadSink {
        void read(int node, int shard, BlockId block, long blockLength, long wanted);
    }

    /** Runs the epochs over {@code sampled} (a manifest already sampled at {@code config.sampleRate()}). */
    public static List<Epoch> run(Manifest sample, Config config) {
        return run(sample, config, e -> { });
    }

    /** {@link #run(Manifest, Config)}, telling {@code done} of each epoch as soon as it is simulated (a long run's progress). */
    public static List<Epoch> run(Manifest sample, Config config, java.util.function.Consumer<Epoch> done) {
        if (config.group() && config.policy().equals("min")) {
            throw new IllegalArgumentException("the cluster simulator runs min without a group only (a member's cache also serves its peers,"
                    + " whose reads no single plan foresees): use lru or sieve with --group");
        }
        Simulated sim = simulated(sample, config);
        Manifest sampled = sim.manifest();
        World world = sim.world();
        int n = world.nodes();
        long scaledCache = (long) (config.cachePerNode() * sim.rate());
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add(config.members() != null ? config.members().get(i) : "node-" + i);
        }
        Rendezvous ring = new Rendezvous(names);
        java.util.Map<ObjectKey, Integer> owners = new java.util.HashMap<>();
        int[] home = sim.plan().canonical() > 1 ? EpochPlan.assignment(sampled, sim.plan().canonical()) : null;
        for (int i = 0; i < sampled.shards().size(); i++) {
            Shard s = sampled.shards().get(i);
            // the node partition's shards belong to their plan home, as a daemon with the job registered routes them;
            // otherwise the rendezvous owner (once per object: O(members) each)
            owners.put(s.key(), home != null ? home[i] % n : ring.owner(Rendezvous.keyOf(s.key())));
        }
        // Stratified capacity: in a sample, a member may own far more (or less) than its 1/N share of the
        // sampled bytes, where the whole corpus would spread evenly; its cache is scaled by the same factor,
        // so that what it owns compared to what it can keep is as in the full cluster.
        long[] owned = new long[n];
        for (Shard s : sampled.shards()) {
            owned[owners.get(s.key())] += s.size();
        }
        double meanOwned = (double) sampled.totalBytes() / n;
        List<List<BlockId>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            futures.add(new ArrayList<>());
        }
        if (config.policy().equals("min")) { // the future MIN reads: every node's accesses, every epoch, as the replay makes them
            for (int epoch = 1; epoch <= config.epochs(); epoch++) {
                EpochPlan plan = EpochPlan.of(sampled, sim.plan(), epoch);
                forEachRead(plan, plan.deal(world, 0), config.blockSize(), (node, shard, block, length, wanted) -> futures.get(node).add(block));
            }
        }
        List<SimCache<BlockId>> caches = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int node = i;
            EvictionPolicy<BlockId> p = policy(config.policy(), futures.get(i));
            long capacity = (long) (scaledCache * sim.capacityScale()[i]);
            if (config.group()) {
                p = new PreferringPolicy<>(p, id -> owners.get(id.key()) == node);
                if (sim.rate() < 1) {
                    capacity = (long) (scaledCache * Math.max(1, owned[i] / meanOwned));
                }
            }
            caches.add(new SimCache<>(p, capacity));
            futures.set(i, null);
        }
        double scale = 1 / sim.rate();
        int globalBatch = (int) Math.min(Integer.MAX_VALUE, (long) config.time().batchSize() * n);
        List<Epoch> out = new ArrayList<>();
        for (int epoch = 1; epoch <= config.epochs(); epoch++) {
            EpochPlan plan = EpochPlan.of(sampled, sim.plan(), epoch);
            RankAssignment deal = plan.deal(world, 0);
            long hitsBefore = caches.stream().mapToLong(c -> c.hits).sum();
            long missesBefore = caches.stream().mapToLong(c -> c.misses).sum();
            long[] c = new long[6]; // block reads, local hits, peer hits, egress, peer bytes, local bytes
            long[] originRequests = new long[1];
            long samples = (long) deal.steps() * n;
            forEachRead(plan, deal, config.blockSize(), (node, shard, id, blockLength, wanted) -> {
                int owner = config.group() ? owners.get(id.key()) : node;
                c[0]++;
                SimCache<BlockId> local = caches.get(node);
                if (local.access(id, blockLength)) {
                    c[1]++;
                    c[5] += wanted;
                    return;
                }
                boolean keptLocally = local.contains(id);
                long fetched = keptLocally ? blockLength : wanted; // a refused block is fetched only for the bytes wanted
                if (owner == node) {
                    c[3] += fetched;
                    originRequests[0]++;
                    return;
                }
                SimCache<BlockId> ownerCache = caches.get(owner);
                if (ownerCache.access(id, blockLength)) {
                    c[2]++;
                } else {
                    c[3] += ownerCache.contains(id) ? blockLength : fetched;
                    originRequests[0]++;
                }
                c[4] += fetched;
            });
            long blockReads = c[0];
            long hits = caches.stream().mapToLong(x -> x.hits).sum() - hitsBefore;
            long misses = caches.stream().mapToLong(x -> x.misses).sum() - missesBefore;
            TimeModel t = config.time();
            double perNode = 1.0 / config.nodes();
            double originShare = Math.min(t.nodeOriginBytesPerSecond(), t.originBytesPerSecond() / config.nodes());
            double read = c[5] * scale * perNode / t.localBytesPerSecond() + c[4] * scale * perNode / t.peerBytesPerSecond()
                    + Math.max(c[3] * scale * perNode / originShare, originRequests[0] * scale * perNode * t.firstByteSeconds() / t.concurrency());
            double throttle = originRequests[0] * scale / (t.prefixRequestsPerSecond() * t.prefixes());
            double steps = Math.ceil(samples * scale / config.nodes() / t.batchSize());
            double compute = steps * t.stepSeconds();
            double seconds = Math.max(compute, Math.max(read, throttle));
            double cost = config.prices().cost((long) (c[3] * scale), (long) (originRequests[0] * scale), 0);
            out.add(new Epoch(epoch, (long) (samples * scale), (long) (blockReads * scale), (long) (c[1] * scale),
                    (long) (c[2] * scale), (long) (hits * scale), (long) (misses * scale), (long) (c[3] * scale),
                    (long) (c[4] * scale), (long) (c[5] * scale), (long) (originRequests[0] * scale), seconds, samples * scale / seconds,
                    steps == 0 ? 0 : (seconds - compute) / steps * 1000, cost, ShardMix.of(plan, globalBatch), deal.localShare()));
            done.accept(out.get(out.size() - 1));
        }
        return out;
    }
}
