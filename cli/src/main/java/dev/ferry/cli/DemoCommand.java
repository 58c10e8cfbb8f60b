package dev.ferry.cli;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.policy.Policies;
import dev.ferry.cli.bench.Machine;
import dev.ferry.cli.bench.WorkDir;
import dev.ferry.cli.errors.UserError;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.loader.Decoder;
import dev.ferry.loader.EpochRun;
import dev.ferry.loader.LoaderConfig;
import dev.ferry.loader.ReadAheadBudget;
import dev.ferry.loader.SyntheticDataset;
import dev.ferry.loader.TarShards;
import dev.ferry.metrics.Advisor;
import dev.ferry.metrics.EpochReport;
import dev.ferry.metrics.FerryMetrics;
import dev.ferry.metrics.RunReport;
import dev.ferry.metrics.TrainingRun;
import dev.ferry.plan.BlockRead;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.plan.World;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.sim.EgressPrediction;
import dev.ferry.sim.SimResult;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.Prices;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.store.chain.RetryPolicy;
import dev.ferry.store.chain.RetryingStore;
import dev.ferry.store.chain.StoreChain;
import dev.ferry.time.Clock;
import dev.ferry.util.Sizes;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ferry demo}: a training job read twice from an object store that behaves like the cloud: directly,
 * as a framework's loader would (no local tier, two batches read ahead per worker), and through ferry (the
 * local tier at half the dataset, evicting by the plan, reading ahead as far as the consumption rate and
 * latency need). The four numbers per epoch side by side, and the advisor's findings.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        header = "Compare a training job read straight from an S3-like store and through ferry.",
        description = {"A training job read twice from an embedded store that behaves like S3: directly, as a plain loader",
                "would, and through ferry. Prints the four numbers per epoch side by side, and the advisor's findings."},
        subcommands = {ChainDemo.class})
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--quick", description = "A small dataset and short epochs: under a minute on 2 cores.")
    boolean quick;

    @Option(names = "--epochs", defaultValue = "3", description = "Epochs of each run (default: ${DEFAULT-VALUE}).")
    int epochs;

    @Option(names = "--step-ms", description = "Simulated accelerator time per batch, ms (default: 60, --quick: 30).")
    Integer stepMs;

    @Option(names = "--report", paramLabel = "FILE", description = "Write {\"direct\":{...},\"ferry\":{...}} as JSON.")
    Path report;

    @Option(names = "--metrics-port", paramLabel = "N",
            description = "Serve the four numbers for Prometheus at http://127.0.0.1:N/metrics while the demo runs (0 picks a port).")
    Integer metricsPort;

    @Option(names = "--dir", paramLabel = "DIR", description = "Where the demo's store and cache live (default: <tmp>/ferry-demo, "
            + "removed at the end unless --keep; a folder given here is kept).")
    Path dir;

    @Option(names = "--keep", description = "Keep the dataset written in the temporary folder, for the next run to reuse.")
    boolean keep;

    private static final int BATCH = 32;

    /** The real clock: a command is where it enters. */
    private final Clock clock = Clock.system();

    @Override
    public Integer call() throws Exception {
        if (epochs < 1) {
            throw new UserError("--epochs must be at least 1");
        }
        int shards = quick ? 12 : 64;
        int samplesPerShard = quick ? 24 : 100;
        int sampleBytes = quick ? 48 * 1024 : 100 * 1024;
        int blockSize = quick ? 256 * 1024 : 2 << 20;
        Duration step = Duration.ofMillis(stepMs != null ? stepMs : quick ? 30 : 60);
        Path root = dir != null ? dir : Path.of(System.getProperty("java.io.tmpdir"), "ferry-demo");
        Path storeDir = root.resolve(quick ? "store-quick" : "store");
        CloudProfile profile = CloudProfile.cloud();
        MetricsServer metricsServer = metricsPort == null ? null : new MetricsServer(metricsPort);
        boolean removeAtEnd = dir == null && !keep;
        try {
            return run(profile, metricsServer, shards, samplesPerShard, sampleBytes, blockSize, step, root, storeDir);
        } finally {
            if (metricsServer != null) {
                metricsServer.close();
            }
            System.out.println();
            if (removeAtEnd) {
                try {
                    WorkDir.deleteTree(storeDir);
                    System.out.println("the demo's dataset in " + storeDir + " is removed (--keep keeps it for the next run)");
                } catch (IOException e) {
                    System.out.println("the demo's dataset in " + storeDir + " could not all be removed (" + e.getMessage() + ")");
                }
            } else {
                System.out.println("the demo's dataset stays in " + storeDir + " for the next run (remove the folder to free its space)");
            }
        }
    }

    private int run(CloudProfile profile, MetricsServer metricsServer, int shards, int samplesPerShard, int sampleBytes, int blockSize,
            Duration step, Path root, Path storeDir) throws Exception {
        System.out.println("ferry demo: a training job, read directly from object storage and through ferry");
        if (metricsServer != null) {
            System.out.println("  metrics: http://127.0.0.1:" + metricsServer.port() + "/metrics (the ferry run's four numbers)");
        }
        System.out.println("  machine: " + Machine.describe());
        try (EmbeddedStore server = EmbeddedStore.start(storeDir, 0, profile);
                S3ObjectStore setup = new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "demo", "demo"))) {
            System.out.println("  store:   " + server.endpoint() + " (" + profile.describe() + ") over " + storeDir);
            Manifest manifest = dataset(setup, storeDir, shards, samplesPerShard, sampleBytes);
            long dataset = manifest.totalBytes();
            long cacheBytes = dataset / 2;
            double acceleratorLimit = BATCH / (step.toNanos() / 1e9);
            System.out.printf(Locale.ROOT, "  dataset: %d WebDataset shards, %d samples, %s; %d epochs, batches of %d, %d ms of accelerator time per batch"
                            + " (the accelerator could take %,.0f samples/s)%n",
                    manifest.shards().size(), manifest.totalSamples(), Sizes.format(dataset), epochs, BATCH, step.toMillis(), acceleratorLimit);
            PlanConfig plan = PlanConfig.DEFAULT.withSeed(2026);
            // the node's block reads, planned once: MIN's future, the prediction, and the advisor's cache sizing
            List<List<BlockRead>> future = EgressPrediction.nodeBlocksByEpoch(manifest, plan, epochs, World.single(), 0, blockSize);

            // direct: a plain loader straight on the object store, with the SDK-style retries any client has
            RunReport direct;
            try (S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "demo", "demo"))) {
                MeteredStore meter = new MeteredStore(s3, Prices.AWS_S3_STANDARD);
                RetryingStore store = new RetryingStore(meter, RetryPolicy.DEFAULT);
                LoaderConfig loader = LoaderConfig.plain(BATCH, 4);
                List<Long> predicted = new ArrayList<>();
                for (int e = 0; e < epochs; e++) {
                    predicted.add(sampleBytes(manifest));
                }
                Advisor.Context context = new Advisor.Context(dataset, 0, loader.decodeWorkers(), loader.fetchConcurrency(), epochs,
                        Prices.AWS_S3_STANDARD.egressPerByte(), c -> predictSteady(manifest, future, c, blockSize));
                System.out.println();
                System.out.println("direct: 4 workers each read then decode, 2 batches ahead per worker, no local tier");
                direct = TrainingRun.run(new TrainingRun.Setup(store, meter, null, manifest, plan, loader, Decoder.identity(), epochs,
                        step, predicted, context, null, null), new Bar("direct"));
            }

            // ferry: the local tier at half the dataset, evicting by the plan, in front of the standard chain
            RunReport ferry;
            List<Long> predicted = egress(manifest, future, cacheBytes, "min", blockSize);
            // the tier also holds prefetched blocks MIN would stream through for their reads, in room of an
            // eighth of its capacity: the run lands between MIN at the capacity and MIN with that room added
            List<Long> predictedWithHeldRoom = egress(manifest, future, cacheBytes + cacheBytes / 8, "min", blockSize);
            // the loader's reads in flight complete out of plan order: the blocks they span (16 samples and a block
            // either side) are not the plan's to keep, so the run stays below MIN with that much less room; and a
            // tier that evicts without the plan (LRU) egresses more than that, or the bound would say nothing
            LoaderConfig ferryLoader = LoaderConfig.DEFAULT.withBatchSize(BATCH);
            long inFlight = ((long) ferryLoader.fetchConcurrency() * sampleBytes / blockSize + 2) * blockSize;
            List<Long> predictedWithReadsInFlight = egress(manifest, future, cacheBytes - inFlight, "min", blockSize);
            List<Long> predictedLru = egress(manifest, future, cacheBytes, "lru", blockSize);
            Path cacheDir = root.resolve("cache-" + clock.nanoTime());
            try (StoreChain chain = StoreChain.over(new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "demo", "demo")),
                    ChainConfig.DEFAULT);
                    CachingStore cache = new CachingStore(chain, CacheConfig.of(cacheDir, cacheBytes).withBlockSize(blockSize)
                            .withWatermarks(1.0, 1.0), Policies.<BlockId>create("min", EgressPrediction.flatten(future)), clock)) {
                Advisor.Context ferryContext = new Advisor.Context(dataset, cacheBytes, ferryLoader.decodeWorkers(),
                        ferryLoader.fetchConcurrency(), epochs, Prices.AWS_S3_STANDARD.egressPerByte(),
                        c -> predictSteady(manifest, future, c, blockSize));
                System.out.println();
                System.out.printf(Locale.ROOT, "ferry: a %s local tier (half the dataset) evicting by the plan (MIN), reads in plan order "
                        + "%d in flight, read-ahead sized in samples from rate and latency (at most %d samples, 64 MiB for the process)%n",
                        Sizes.format(cacheBytes), ferryLoader.fetchConcurrency(), ferryLoader.aheadSamples());
                FerryMetrics metrics = metricsServer == null ? null : FerryMetrics.bind(metricsServer.registry(), chain.meter(), cache);
                ferry = TrainingRun.run(new TrainingRun.Setup(cache, chain.meter(), cache, manifest, plan, ferryLoader, Decoder.identity(),
                        epochs, step, predicted, ferryContext, metrics, new ReadAheadBudget(64L << 20)), new Bar("ferry"));
            } finally {
                WorkDir.deleteTree(cacheDir);
            }

            table(direct, ferry);
            System.out.println("(hit bytes: the share of bytes read that came from the local tier; predicted: the plan replayed through the "
                    + "policy before the run)");
            System.out.println();
            System.out.println("advisor, direct:");
            direct.advice().forEach(a -> System.out.println("  - " + a));
            System.out.println("advisor, ferry:");
            ferry.advice().forEach(a -> System.out.println("  - " + a));
            System.out.println();
            System.out.println(DemoVerdict.of(direct, ferry, dataset, predicted, acceleratorLimit).line());
            if (report != null) {
                Files.writeString(report, "{\"direct\":" + direct.toJson() + ",\"ferry\":" + ferry.toJson()
                        + ",\"ferry_predicted_egress_bytes_with_held_room\":" + predictedWithHeldRoom
                        + ",\"ferry_predicted_egress_bytes_with_reads_in_flight\":" + predictedWithReadsInFlight
                        + ",\"ferry_predicted_egress_bytes_lru\":" + predictedLru + "}\n");
                System.out.println();
                System.out.println("report written to " + report);
            }
        }
        return 0;
    }

    /** Each epoch's predicted egress: the plan's block reads replayed through {@code policy} at {@code capacity}. */
    private static List<Long> egress(Manifest manifest, List<List<BlockRead>> future, long capacity, String policy, int blockSize) {
        List<Long> bytes = new ArrayList<>();
        for (SimResult r : EgressPrediction.predict(manifest, future, capacity, policy, blockSize)) {
            bytes.add(r.upstreamBytes());
        }
        return bytes;
    }

    /** The dataset in the store, written if absent; its manifest comes from listing it and indexing the shards. */
    private static Manifest dataset(S3ObjectStore s3, Path storeDir, int shards, int samplesPerShard, int sampleBytes) throws Exception {
        if (!Files.isDirectory(storeDir.resolve("demo/train"))) {
            System.out.printf(Locale.ROOT, "  writing the dataset (%d shards) ...%n", shards);
            s3.createBucket("demo");
            return SyntheticDataset.write(s3, "demo", "train", shards, samplesPerShard, sampleBytes, 7);
        }
        List<Shard> list = new ArrayList<>();
        ListRequest request = ListRequest.of("demo", "train/");
        while (true) {
            ListPage page = s3.list(request);
            for (ObjectMeta m : page.objects()) {
                List<Long> offsets;
                try (InputStream in = Files.newInputStream(storeDir.resolve("demo").resolve(m.key().key()))) {
                    offsets = TarShards.index(in);
                }
                list.add(new Shard(m.key(), m.size(), m.etag(), offsets.size() - 1, offsets));
            }
            if (!page.isTruncated()) {
                break;
            }
            request = request.withContinuationToken(page.nextToken());
        }
        if (list.isEmpty()) {
            throw new UserError("the demo store at " + storeDir + " has no shards; remove it and run again");
        }
        return new Manifest(list);
    }

    /** The bytes a run without a cache reads each epoch: every sample once. */
    private static long sampleBytes(Manifest manifest) {
        long total = 0;
        for (Shard s : manifest.shards()) {
            total += s.sampleOffset(s.samples()) - s.sampleOffset(0);
        }
        return total;
    }

    /** Predicted egress of the run's last epoch at a capacity: what the advisor uses to size the cache. */
    private static long predictSteady(Manifest manifest, List<List<BlockRead>> future, long capacity, int blockSize) {
        List<SimResult> r = EgressPrediction.predict(manifest, future, capacity, "min", blockSize);
        return r.get(r.size() - 1).upstreamBytes();
    }

    private void table(RunReport direct, RunReport ferry) {
        System.out.println();
        System.out.println("the four numbers, per epoch");
        System.out.printf(Locale.ROOT, "%-7s %5s %10s %13s %13s %9s %11s %7s %11s %9s %11s %12s%n", "run", "epoch", "samples/s",
                "wait/step p50", "wait/step p99", "hit", "prefetched", "waited", "egress", "requests", "cost", "predicted");
        for (int i = 0; i < epochs; i++) {
            row("direct", direct.epochs().get(i));
            row("ferry", ferry.epochs().get(i));
        }
        System.out.println("(of the bytes read: hit = on the local tier before the epoch asked; prefetched = fetched during it, before the");
        System.out.println(" read; waited = the read waited for the object store. Reading directly, every byte is waited for.)");
    }

    private static void row(String run, EpochReport r) {
        // reading directly there is no tier: every byte came from the store as the read waited
        boolean direct = r.sources() == null || r.sources().bytes() == 0;
        double prefetched = direct ? 0 : r.sources().prefetchedShareBytes();
        double waited = direct ? 1 : r.sources().waitedShareBytes();
        System.out.printf(Locale.ROOT, "%-7s %5d %10.0f %10.1f ms %10.1f ms %8.0f%% %10.0f%% %6.0f%% %11s %9d %10.4f$ %12s%n", run,
                r.epoch(), r.samplesPerSecond(), r.waitPerStepMillisP50(), r.waitPerStepMillisP99(), 100 * r.localHitRateBytes(),
                100 * prefetched, 100 * waited, Sizes.format(r.egressBytes()), r.egressRequests(), r.egressCostUsd(),
                r.predictedEgressBytes() < 0 ? "-" : Sizes.format(r.predictedEgressBytes()));
    }

    /** A progress bar per epoch, redrawn in place on a terminal, one line per epoch otherwise. */
    private static final class Bar implements TrainingRun.Progress {
        private final String name;
        private final boolean terminal = System.console() != null;
        private int lastPercent = -1;

        Bar(String name) {
            this.name = name;
        }

        @Override
        public void step(int epoch, long step, long steps, EpochRun<?> run) {
            int percent = (int) (100 * step / steps);
            if (percent == lastPercent && step != steps) {
                return;
            }
            lastPercent = percent;
            var s = run.stats();
            String bar = "#".repeat(percent / 5) + "-".repeat(20 - percent / 5);
            String line = String.format(Locale.ROOT, "  %-6s epoch %d [%s] %3d%%  %6.0f samples/s  wait p50 %6.1f ms  read-ahead %d",
                    name, epoch, bar, percent, s.samplesPerSecond(), s.waitP50Millis(), run.window());
            if (terminal) {
                System.out.print("\r" + line + (step == steps ? System.lineSeparator() : ""));
                System.out.flush();
            } else if (step == steps) {
                System.out.println(line);
                lastPercent = -1;
            }
            if (step == steps) {
                lastPercent = -1;
            }
        }
    }
}
