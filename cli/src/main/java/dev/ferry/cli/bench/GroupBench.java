package dev.ferry.cli.bench;

import dev.ferry.cli.errors.UserError;
import dev.ferry.plan.PlanConfig;
import dev.ferry.sim.ClusterSim;
import dev.ferry.store.Prices;
import dev.ferry.time.Clock;
import dev.ferry.util.Sizes;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ferry bench group}: a regional group of daemons on loopback, measured, next to the simulator's prediction of it. */
@Command(name = "group", mixinStandardHelpOptions = true,
        header = "Run a regional group of daemons on loopback beside its simulation.",
        description = {"Run N ferry daemons on loopback ports as one regional group over one origin folder, one consumer per node",
                "reading its share of each epoch through its own daemon; print what the daemons measured next to what",
                "`ferry sim --nodes` predicts for the same dataset, plan and caches."})
final class GroupBench implements Callable<Integer> {
    @Option(names = "--nodes", defaultValue = "4", description = "Daemons in the group (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--shards", defaultValue = "48", description = "Objects in the dataset (default: ${DEFAULT-VALUE}).")
    int shards;

    @Option(names = "--samples-per-shard", defaultValue = "64", description = "Samples per object (default: ${DEFAULT-VALUE}).")
    int samplesPerShard;

    @Option(names = "--sample-bytes", defaultValue = "16KiB", description = "Smallest sample; samples are 1-2x this (default: ${DEFAULT-VALUE}).")
    String sampleBytes;

    @Option(names = "--cache-per-node", defaultValue = "32MiB", description = "Each daemon's local tier (default: ${DEFAULT-VALUE}).")
    String cachePerNode;

    @Option(names = "--block-size", defaultValue = "1MiB", description = "Cache block size (default: ${DEFAULT-VALUE}).")
    String blockSize;

    @Option(names = "--epochs", defaultValue = "3", description = "Epochs (default: ${DEFAULT-VALUE}).")
    int epochs;

    @Option(names = "--seed", defaultValue = "5", description = "Plan and data seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--kill", paramLabel = "NODE", defaultValue = "-1", description = "Close this daemon halfway through the last epoch.")
    int kill;

    @Option(names = "--plans", description = "Register the job's plan on every daemon: reads go first to last epoch's reader (peer hints).")
    boolean plans;

    @Option(names = "--partition", defaultValue = "global", description = {"node: each node reads its own shards every epoch;",
            "global: every node reads a share of every shard (default: ${DEFAULT-VALUE})."})
    String partition;

    @Option(names = "--canonical-nodes", defaultValue = "0", description = "Node partition: canonical nodes (default: the node count).")
    int canonicalNodes;

    @Option(names = "--standalone", description = "Run the daemons each on its own, not as one regional group.")
    boolean standalone;

    @Option(names = "--resize", description = {"With --kill (the last node): the job checkpoints halfway through the last epoch, that",
            "daemon leaves, and the others resume on one node fewer with the checkpoint's homes (only its canonical nodes move);",
            "every sample is checked to be read once."})
    boolean resize;

    @Option(names = "--shuffle-block-shards", description = {"Shards whose samples are shuffled together (default: what each daemon's tier",
            "can serve, as a daemon's registration and ferry sim choose: PlanConfig.shuffleBlockFittingTier)."})
    Integer shuffleBlockShards;

    @Option(names = "--policy", defaultValue = "lru", description = "The simulator's policy for the comparison: lru or min (default: ${DEFAULT-VALUE}).")
    String policy;

    @Override
    public Integer call() throws Exception {
        PlanConfig plan;
        LoopbackCluster.Setup setup;
        try {
            long cache = Sizes.parse(cachePerNode);
            // samples are 1-2x --sample-bytes: the mean object is about 1.5x that times the samples in it
            long meanShard = (long) (1.5 * Sizes.parse(sampleBytes) * samplesPerShard);
            plan = PlanConfig.DEFAULT.withPartition(PlanConfig.Partition.parse(partition)).withShuffleBlockShards(shuffleBlockShards != null
                    ? shuffleBlockShards : PlanConfig.shuffleBlockFittingTier(cache, meanShard * shards / Math.max(1, nodes), meanShard));
            if (canonicalNodes > 0) {
                plan = plan.withCanonicalNodes(canonicalNodes);
            }
            setup = new LoopbackCluster.Setup(nodes, shards, samplesPerShard, (int) Sizes.parse(sampleBytes), Sizes.parse(cachePerNode),
                    (int) Sizes.parse(blockSize), epochs, seed, kill, kill >= 0 ? epochs : 0, plans, plan, !standalone, resize);
        } catch (IllegalArgumentException e) {
            throw new UserError(e.getMessage());
        }
        try (WorkDir work = WorkDir.of(null, "ferry-bench-group")) {
            System.out.printf(Locale.ROOT, "%d daemons %s, %s of cache each, %d epochs, %s partition (%d canonical nodes), shuffle blocks of %d"
                    + " shards%n", nodes, standalone ? "each on its own" : "in one group", Sizes.format(setup.cachePerNode()), epochs,
                    setup.plan().partition().label(), setup.plan().canonical(), setup.plan().shuffleBlockShards());
            LoopbackCluster.Result real = LoopbackCluster.run(work.path(), setup, Clock.system());
            long dataset = real.manifest().totalBytes();
            System.out.printf(Locale.ROOT, "dataset: %d objects, %d samples, %s%n", real.manifest().shards().size(),
                    real.manifest().totalSamples(), Sizes.format(dataset));
            List<ClusterSim.Epoch> sim = ClusterSim.run(real.manifest(), new ClusterSim.Config(nodes, setup.cachePerNode(), setup.blockSize(),
                    epochs, policy, !standalone, 1.0, setup.plan(), ClusterSim.TimeModel.defaults(0.01, 4),
                    Prices.AWS_S3_STANDARD, real.members()));
            System.out.println();
            System.out.println("epoch   hit rate real / sim     egress real / sim         requests real / sim    peer bytes real / sim"
                    + "      failed  missing  extra   shard mix");
            for (int i = 0; i < epochs; i++) {
                LoopbackCluster.Epoch r = real.epochs().get(i);
                ClusterSim.Epoch s = sim.get(i);
                System.out.printf(Locale.ROOT, "%5d   %6.1f%% / %6.1f%%     %10s / %-10s   %8d / %-8d   %10s / %-10s   %6d %8d %6d   %9.3f%n", r.epoch(),
                        100 * r.cacheHitRate(), 100 * s.cacheHitRate(), Sizes.format(r.egressBytes()), Sizes.format(s.egressBytes()),
                        r.egressRequests(), s.originRequests(), Sizes.format(r.peerBytes()), Sizes.format(s.peerBytes()), r.failedReads(),
                        r.missingSamples(), r.extraReads(), s.globalBatchShardMix());
            }
            if (resize) {
                System.out.println("(the simulator runs every epoch on " + nodes + " nodes; the real run lost one halfway through epoch " + epochs + ")");
            }
            if (plans) {
                for (LoopbackCluster.Epoch r : real.epochs()) {
                    System.out.printf(Locale.ROOT, "epoch %d: %s read from the node that read it last epoch (peer hints)%n", r.epoch(),
                            Sizes.format(r.hintedBytes()));
                }
            }
            if (!real.failures().isEmpty()) {
                System.out.println("failed reads (first 5): " + real.failures().subList(0, Math.min(5, real.failures().size())));
            }
        }
        return 0;
    }
}
