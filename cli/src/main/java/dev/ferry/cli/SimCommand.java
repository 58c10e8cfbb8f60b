package dev.ferry.cli;

import dev.ferry.cache.policy.Policies;
import dev.ferry.cli.errors.UserError;
import dev.ferry.metrics.Advisor;
import dev.ferry.plan.BlockRead;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.plan.ShardMix;
import dev.ferry.plan.World;
import dev.ferry.sim.Access;
import dev.ferry.sim.CacheSimulator;
import dev.ferry.sim.ClusterSim;
import dev.ferry.sim.EgressPrediction;
import dev.ferry.sim.SimResult;
import dev.ferry.sim.SyntheticTrace;
import dev.ferry.sim.TraceParser;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.Prices;
import dev.ferry.time.Clock;
import dev.ferry.util.Sizes;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ferry sim}: replays a trace, or synthetic shuffled epochs, through the shipped eviction policies. */
@Command(name = "sim", mixinStandardHelpOptions = true,
        description = {"Replay an access trace through the cache's eviction policies (the very classes the local tier runs).",
                "Trace format: one access per line, 'KEY SIZE_BYTES'; lines starting with # are comments."})
final class SimCommand implements Callable<Integer> {
    @Option(names = "--trace", paramLabel = "FILE", description = "The trace to replay.")
    Path trace;

    @Option(names = "--synthetic", description = "Build a trace of shuffled epochs instead (a fresh permutation every epoch).")
    boolean synthetic;

    @Option(names = "--objects", defaultValue = "1000", description = "Synthetic: number of objects (default: ${DEFAULT-VALUE}).")
    int objects;

    @Option(names = "--epochs", defaultValue = "3", description = "Synthetic: number of epochs (default: ${DEFAULT-VALUE}).")
    int epochs;

    @Option(names = "--size-bytes", defaultValue = "1048576", description = "Synthetic: size of each object (default: ${DEFAULT-VALUE}).")
    long sizeBytes;

    @Option(names = "--seed", defaultValue = "1", description = "Synthetic: shuffle seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--plan", description = {"Simulate a training job instead: the block accesses of one node's epoch plans",
            "(shards shuffled in blocks of 4, samples shuffled within them), per epoch."})
    boolean plan;

    @Option(names = "--shards", defaultValue = "64", description = "Plan: shards in the dataset (default: ${DEFAULT-VALUE}).")
    int shards;

    @Option(names = "--samples-per-shard", defaultValue = "256", description = "Plan: samples per shard (default: ${DEFAULT-VALUE}).")
    int samplesPerShard;

    @Option(names = "--shard-size", defaultValue = "64MiB", description = "Plan: bytes per shard (default: ${DEFAULT-VALUE}).")
    String shardSize;

    @Option(names = "--block-size", defaultValue = "4MiB", description = "Plan: the cache's block size (default: ${DEFAULT-VALUE}).")
    String blockSize;

    @Option(names = "--cache-size", paramLabel = "SIZE", description = "Cache capacity, e.g. 500MB, 4GiB, 1048576.")
    String cacheSize;

    @Option(names = "--cache-fraction", paramLabel = "F", description = "Cache capacity as a fraction of the trace's distinct bytes, e.g. 0.5.")
    Double cacheFraction;

    @Option(names = "--policies", defaultValue = "lru,pin,sieve,min", split = ",",
            description = "Policies to compare (default: ${DEFAULT-VALUE}; known: lru, pin, sieve, min).")
    List<String> policies;

    @Option(names = "--json", description = "Print JSON instead of a table.")
    boolean json;

    @Option(names = "--nodes", paramLabel = "N", description = {"Simulate a cluster instead: N nodes, each with its own local tier,",
            "reading one corpus by the shipped plans (node n takes positions n, n+N, ...); predicts the four numbers per epoch."})
    Integer nodes;

    @Option(names = "--dataset-bytes", defaultValue = "1TiB", description = "Cluster: corpus size, e.g. 1PB (default: ${DEFAULT-VALUE}).")
    String datasetBytes;

    @Option(names = "--shard-bytes", defaultValue = "1GiB", description = "Cluster: object size (default: ${DEFAULT-VALUE}).")
    String shardBytes;

    @Option(names = "--cache-per-node", defaultValue = "1TiB", description = "Cluster: each node's local tier (default: ${DEFAULT-VALUE}).")
    String cachePerNode;

    @Option(names = "--group", description = "Cluster: the nodes form one regional group (each object read through its owner).")
    boolean group;

    @Option(names = "--policy", defaultValue = "auto", description = {"Cluster: lru, sieve, or min (each node's local tier evicting by its",
            "plan, as the daemon does for a registered job; not with --group); auto: min, or lru with --group (default: ${DEFAULT-VALUE})."})
    String clusterPolicy;

    @Option(names = "--partition", defaultValue = "auto", description = {"Cluster: node (each node reads its own shards every epoch),",
            "global (every node reads a share of every shard), or auto: node for more than one node (default: ${DEFAULT-VALUE})."})
    String partition;

    @Option(names = "--canonical-nodes", defaultValue = "0", description = "Cluster, node partition: canonical nodes (default: the node count).")
    int canonicalNodes;

    @Option(names = "--shuffle-block-shards", description = "Cluster: shards whose samples are shuffled together (default: 4, or "
            + "what a quarter of a node's tier holds when its share of the corpus outgrows the tier).")
    Integer shuffleBlockShards;

    @Option(names = "--mix-fraction", defaultValue = "0", description = "Cluster, node partition: share of each node's shards read elsewhere "
            + "each epoch (default: ${DEFAULT-VALUE}).")
    double mixFraction;

    @Option(names = "--sample-rate", paramLabel = "R", description = "Cluster: simulate this fraction of the objects (default: enough for "
            + "about 4 million sample reads per epoch).")
    Double sampleRate;

    @Option(names = "--step-ms", defaultValue = "100", description = "Cluster: the consumer's time per step (default: ${DEFAULT-VALUE}).")
    double stepMs;

    @Option(names = "--batch-size", defaultValue = "256", description = "Cluster and plan: samples per step and node (default: ${DEFAULT-VALUE}).")
    int batchSize;

    /** Times the simulation: a command is where the real clock enters. */
    private final Clock clock = Clock.system();

    @Override
    public Integer call() throws Exception {
        if (nodes != null) {
            return simulateCluster();
        }
        if ((synthetic ? 1 : 0) + (plan ? 1 : 0) + (trace != null ? 1 : 0) != 1) {
            throw new UserError("give one of --trace FILE, --synthetic or --plan");
        }
        if ((cacheSize == null) == (cacheFraction == null)) {
            throw new UserError("give either --cache-size SIZE or --cache-fraction F");
        }
        for (String p : policies) {
            if (!Policies.NAMES.contains(p)) {
                throw new UserError("--policies: unknown policy '" + p + "': use one of " + String.join(", ", Policies.NAMES));
            }
        }
        if (plan) {
            return simulatePlan();
        }
        List<Access> accesses;
        if (synthetic) {
            if (objects < 1 || epochs < 1 || sizeBytes < 0) {
                throw new UserError("--objects and --epochs must be positive and --size-bytes not negative");
            }
            accesses = SyntheticTrace.shuffledEpochs(objects, epochs, sizeBytes, seed);
        } else {
            if (!Files.isRegularFile(trace)) {
                throw new UserError("--trace: no such file: " + trace);
            }
            try {
                accesses = TraceParser.parse(trace);
            } catch (TraceParser.BadTraceException e) {
                throw new UserError(e.getMessage());
            } catch (NoSuchFileException e) {
                throw new UserError("--trace: no such file: " + trace);
            }
        }
        long distinct = accesses.stream().collect(Collectors.toMap(Access::key, Access::size, Math::max))
                .values().stream().mapToLong(Long::longValue).sum();
        long capacity;
        if (cacheSize != null) {
            try {
                capacity = Sizes.parse(cacheSize);
            } catch (IllegalArgumentException e) {
                throw new UserError("--cache-size: " + e.getMessage());
            }
        } else {
            if (cacheFraction < 0) {
                throw new UserError("--cache-fraction must not be negative: " + cacheFraction);
            }
            capacity = Math.round(distinct * cacheFraction);
        }
        List<String> keys = accesses.stream().map(Access::key).toList();
        List<SimResult> results = new ArrayList<>();
        for (String p : policies) {
            results.add(CacheSimulator.run(accesses, capacity, Policies.create(p, keys)));
        }
        if (json) {
            System.out.println(toJson(results));
        } else {
            System.out.printf(Locale.ROOT, "%d accesses, %s of distinct objects, cache %s (%.0f%%)%n", accesses.size(),
                    Sizes.format(distinct), Sizes.format(capacity), distinct == 0 ? 0 : 100.0 * capacity / distinct);
            System.out.printf(Locale.ROOT, "%-7s %10s %10s %9s %10s %14s%n", "policy", "requests", "hits", "hit rate", "byte hits", "upstream");
            for (SimResult r : results) {
                System.out.printf(Locale.ROOT, "%-7s %10d %10d %8.1f%% %9.1f%% %14s%n", r.policy(), r.requests(), r.hits(),
                        100 * r.hitRate(), 100 * r.byteHitRate(), Sizes.format(r.upstreamBytes()));
            }
        }
        return 0;
    }

    private int simulateCluster() {
        long dataset;
        long shard;
        long cache;
        int block;
        try {
            dataset = Sizes.parse(datasetBytes);
            shard = Sizes.parse(shardBytes);
            cache = Sizes.parse(cachePerNode);
            block = (int) Sizes.parse(blockSize);
        } catch (IllegalArgumentException e) {
            throw new UserError("a size is not understood: " + e.getMessage());
        }
        if (nodes < 1 || epochs < 1 || samplesPerShard < 1 || batchSize < 1 || dataset < 1 || shard < 1 || stepMs < 0) {
            throw new UserError("--nodes, --epochs, --samples-per-shard, --batch-size and the sizes must be positive");
        }
        double rate = sampleRate != null ? sampleRate : ClusterSim.autoRate(dataset, shard, samplesPerShard, 4_000_000);
        if (clusterPolicy.equals("auto")) {
            clusterPolicy = group ? "lru" : "min";
        }
        if (!(rate > 0 && rate <= 1)) {
            throw new UserError("--sample-rate must be in (0, 1]: " + rate);
        }
        long start = clock.nanoTime();
        Manifest sampled;
        List<ClusterSim.Epoch> result;
        PlanConfig planConfig;
        try {
            planConfig = PlanConfig.DEFAULT.withSeed(seed).withPartition(PlanConfig.Partition.parse(partition)).withMixFraction(mixFraction)
                    .withShuffleBlockShards(shuffleBlockShards != null ? shuffleBlockShards
                            : PlanConfig.shuffleBlockFittingTier(cache, dataset / Math.max(1, nodes), shard));
            if (canonicalNodes > 0) {
                planConfig = planConfig.withCanonicalNodes(canonicalNodes);
            }
            planConfig = planConfig.forWorld(new World(nodes, 1, 1));
            sampled = ClusterSim.syntheticSample(dataset, shard, samplesPerShard, rate);
            System.err.printf(Locale.ROOT, "simulating %d epochs of %d nodes over %d sampled objects...%n", epochs, nodes,
                    sampled.shards().size());
            result = ClusterSim.run(sampled, new ClusterSim.Config(nodes, cache, block, epochs, clusterPolicy, group, rate,
                    planConfig, ClusterSim.TimeModel.defaults(stepMs / 1000, batchSize), Prices.AWS_S3_STANDARD, null, dataset),
                    e -> System.err.printf(Locale.ROOT, "  epoch %d of %d simulated (%.1f s so far; egress %s)%n", e.epoch(), epochs,
                            (clock.nanoTime() - start) / 1e9, Sizes.format(e.egressBytes())));
        } catch (IllegalArgumentException e) {
            throw new UserError(e.getMessage());
        }
        int simulatedNodes = ClusterSim.simulatedNodes(sampled, new ClusterSim.Config(nodes, cache, block, epochs, clusterPolicy, group, rate,
                planConfig, ClusterSim.TimeModel.defaults(stepMs / 1000, batchSize), Prices.AWS_S3_STANDARD, null, dataset));
        List<String> advice = Advisor.partition(new Advisor.Cluster(planConfig.partition().label(), nodes, dataset, cache, false),
                result.stream().map(e -> new Advisor.PartitionEpoch(e.epoch(), e.egressBytes(), e.readerLocalRate(), e.globalBatchShardMix(),
                        e.egressCostUsd())).toList());
        double seconds = (clock.nanoTime() - start) / 1e9;
        long scaledBlocks = (long) (cache * rate) / block;
        if (json) {
            StringBuilder b = new StringBuilder("{\"nodes\":" + nodes + ",\"partition\":\"" + planConfig.partition().label()
                    + "\",\"canonical_nodes\":" + planConfig.canonical() + ",\"mix_fraction\":" + planConfig.mixFraction() + ",\"policy\":\""
                    + clusterPolicy + "\",\"dataset_bytes\":" + dataset + ",\"sample_rate\":" + rate + ",\"sampled_objects\":"
                    + sampled.shards().size() + ",\"simulated_nodes\":" + simulatedNodes + ",\"seconds\":" + String.format(Locale.ROOT, "%.1f", seconds)
                    + ",\"epochs\":[");
            for (int i = 0; i < result.size(); i++) {
                ClusterSim.Epoch e = result.get(i);
                b.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT, "{\"epoch\":%d,\"samples_per_s\":%.1f,\"wait_per_step_ms\":%.3f,"
                        + "\"local_hit_rate\":%.6f,\"peer_hit_rate\":%.6f,\"cache_hit_rate\":%.6f,\"egress_bytes\":%d,\"peer_bytes\":%d,"
                        + "\"egress_cost_usd\":%.2f,\"origin_requests\":%d,\"global_batch_shard_mix\":%.4f,\"local_share\":%.4f}",
                        e.epoch(), e.samplesPerSecond(), e.waitPerStepMillis(), e.readerLocalRate(), e.readerPeerRate(), e.cacheHitRate(),
                        e.egressBytes(), e.peerBytes(), e.egressCostUsd(), e.originRequests(), e.globalBatchShardMix(), e.localShare()));
            }
            b.append("],\"advice\":[");
            for (int i = 0; i < advice.size(); i++) {
                b.append(i == 0 ? "" : ",").append('"').append(advice.get(i).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
            }
            System.out.println(b.append("]}"));
            return 0;
        }
        System.out.printf(Locale.ROOT, "%d nodes%s, %s in %s objects of %d samples, %s of local tier each (%s policy), %s partition%s%n",
                nodes, group ? " in one regional group" : "", Sizes.format(dataset), Sizes.format(shard), samplesPerShard, Sizes.format(cache),
                clusterPolicy, planConfig.partition().label(), planConfig.partition() == PlanConfig.Partition.NODE
                        ? " (" + planConfig.canonical() + " canonical nodes" + (mixFraction > 0 ? ", mix " + mixFraction : "") + ")" : "");
        if (simulatedNodes < nodes) { // the node partition under sampling: fewer nodes, each cache scaled to what its node owns
            scaledBlocks = scaledBlocks * nodes / simulatedNodes;
        }
        System.out.printf(Locale.ROOT, "simulated %d of the objects on %d nodes (sample rate %.3g; each cache scaled to about %d blocks of %s) "
                + "in %.1f s%n", sampled.shards().size(), simulatedNodes, rate, scaledBlocks, Sizes.format(block), seconds);
        if (rate < 1 && scaledBlocks < 200) {
            System.out.println("warning: under 200 blocks per simulated cache: hit rates are rough; raise --sample-rate");
        }
        System.out.printf(Locale.ROOT, "%5s %12s %12s %10s %10s %14s %14s %12s %10s%n", "epoch", "samples/s", "wait/step", "local hit",
                "peer hit", "egress", "peer bytes", "egress cost", "shard mix");
        for (ClusterSim.Epoch e : result) {
            System.out.printf(Locale.ROOT, "%5d %12.0f %9.1f ms %9.1f%% %9.1f%% %14s %14s %11.2f$ %10.3f%n", e.epoch(), e.samplesPerSecond(),
                    e.waitPerStepMillis(), 100 * e.readerLocalRate(), 100 * e.readerPeerRate(), Sizes.format(e.egressBytes()),
                    Sizes.format(e.peerBytes()), e.egressCostUsd(), e.globalBatchShardMix());
        }
        System.out.println("(local hit: block reads served by the reader's own tier; shard mix: distinct shards per global batch against a "
                + "uniform shuffle's)");
        advice.forEach(a -> System.out.println("advice: " + a));
        return 0;
    }

    private int simulatePlan() {
        long shardBytes;
        long block;
        try {
            shardBytes = Sizes.parse(shardSize);
            block = Sizes.parse(blockSize);
        } catch (IllegalArgumentException e) {
            throw new UserError(e.getMessage());
        }
        if (shards < 1 || samplesPerShard < 1 || epochs < 1 || batchSize < 1 || shardBytes < 1 || block < 4096 || block > Integer.MAX_VALUE) {
            throw new UserError("--shards, --samples-per-shard, --epochs, --batch-size and --shard-size must be positive and --block-size 4 KiB to 2 GiB");
        }
        List<Shard> list = new ArrayList<>();
        for (int i = 0; i < shards; i++) {
            list.add(new Shard(ObjectKey.of("dataset", String.format("train/shard-%06d.tar", i)), shardBytes, "v1", samplesPerShard));
        }
        Manifest manifest = new Manifest(list);
        long capacity;
        try {
            capacity = cacheSize != null ? Sizes.parse(cacheSize) : Math.round(manifest.totalBytes() * cacheFraction);
        } catch (IllegalArgumentException e) {
            throw new UserError("--cache-size: " + e.getMessage());
        }
        if (capacity < 0) {
            throw new UserError("--cache-fraction must not be negative");
        }
        List<List<BlockRead>> future = EgressPrediction.nodeBlocksByEpoch(manifest, PlanConfig.DEFAULT.withSeed(seed), epochs,
                World.single(), 0, (int) block);
        // shuffle quality next to egress: a property of the plan, the same under every policy (one node: the global batch is --batch-size)
        List<Double> mix = ShardMix.perEpoch(manifest, PlanConfig.DEFAULT.withSeed(seed).forWorld(World.single()), epochs, batchSize);
        if (json) {
            StringBuilder out = new StringBuilder("{\"policies\":[");
            for (int i = 0; i < policies.size(); i++) {
                List<SimResult> perEpoch = EgressPrediction.predict(manifest, future, capacity, policies.get(i), (int) block);
                out.append(i == 0 ? "" : ",").append("{\"policy\":\"").append(policies.get(i)).append("\",\"epochs\":[");
                for (int e = 0; e < perEpoch.size(); e++) {
                    SimResult r = perEpoch.get(e);
                    out.append(e == 0 ? "" : ",").append(String.format(Locale.ROOT,
                            "{\"epoch\":%d,\"requests\":%d,\"hits\":%d,\"hit_rate\":%.6f,\"byte_hit_rate\":%.6f,\"upstream_bytes\":%d,"
                            + "\"global_batch_shard_mix\":%.4f}", e + 1, r.requests(), r.hits(), r.hitRate(), r.byteHitRate(), r.upstreamBytes(),
                            mix.get(e)));
                }
                out.append("]}");
            }
            System.out.println(out.append("]}"));
            return 0;
        }
        System.out.printf(Locale.ROOT, "plan: %d shards x %d samples, %s in all, %d epochs, %s blocks; cache %s (%.0f%%)%n",
                shards, samplesPerShard, Sizes.format(manifest.totalBytes()), epochs, Sizes.format(block), Sizes.format(capacity),
                100.0 * capacity / manifest.totalBytes());
        System.out.printf(Locale.ROOT, "%-7s %s%n", "policy", "block hit rate and upstream bytes, epoch by epoch");
        for (String p : policies) {
            List<SimResult> perEpoch = EgressPrediction.predict(manifest, future, capacity, p, (int) block);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-7s", p));
            for (int e = 0; e < perEpoch.size(); e++) {
                line.append(String.format(Locale.ROOT, "  e%d %5.1f%% %10s", e + 1, 100 * perEpoch.get(e).hitRate(),
                        Sizes.format(perEpoch.get(e).upstreamBytes())));
            }
            System.out.println(line);
        }
        StringBuilder mixLine = new StringBuilder(String.format(Locale.ROOT, "%-7s", "mix"));
        for (int e = 0; e < epochs; e++) {
            mixLine.append(String.format(Locale.ROOT, "  e%d %17.3f", e + 1, mix.get(e)));
        }
        System.out.println(mixLine + "   (global_batch_shard_mix for batches of " + batchSize + ")");
        return 0;
    }

    static String toJson(List<SimResult> results) {
        StringBuilder out = new StringBuilder("{\"policies\":[");
        for (int i = 0; i < results.size(); i++) {
            SimResult r = results.get(i);
            out.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                    "{\"policy\":\"%s\",\"requests\":%d,\"hits\":%d,\"hit_rate\":%.6f,\"byte_hit_rate\":%.6f,\"upstream_bytes\":%d}",
                    r.policy(), r.requests(), r.hits(), r.hitRate(), r.byteHitRate(), r.upstreamBytes()));
        }
        return out.append("]}").toString();
    }
}
