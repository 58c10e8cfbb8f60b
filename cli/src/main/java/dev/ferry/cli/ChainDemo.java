package dev.ferry.cli;

import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CacheStats;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.policy.Policies;
import dev.ferry.cli.bench.Machine;
import dev.ferry.cli.bench.WorkDir;
import dev.ferry.cli.errors.UserError;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.sim.Access;
import dev.ferry.sim.CacheSimulator;
import dev.ferry.sim.SimResult;
import dev.ferry.sim.SyntheticTrace;
import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.Prices;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.GovernedStore;
import dev.ferry.store.chain.GovernorConfig;
import dev.ferry.store.chain.MeterSnapshot;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.store.chain.ParallelReadConfig;
import dev.ferry.store.chain.RetryPolicy;
import dev.ferry.store.chain.RetryingStore;
import dev.ferry.store.chain.StoreChain;
import dev.ferry.time.Clock;
import dev.ferry.util.Sizes;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ferry demo chain}: the chain of stores end to end against the embedded store with the cloud profile.
 * It shows the two things object storage does to a training job, and what the chain does about them:
 * per-connection bandwidth (answered by parallel ranged GETs) and per-prefix request limits (answered by the
 * governor), then two shuffled epochs through the local tier and the simulator on a smaller cache. Epoch plans,
 * the loader and the four numbers are shown by {@code ferry demo} itself ({@link DemoCommand}).
 */
@Command(name = "chain", mixinStandardHelpOptions = true,
        header = "Tour the chain of stores against an S3-like store.",
        description = {"A tour of the chain of stores against the embedded store with the cloud profile: parallel ranged GETs",
                "vs one stream per object, the per-prefix governor vs a SlowDown storm, and two epochs through the local tier."})
final class ChainDemo implements Callable<Integer> {
    @Option(names = "--shards", defaultValue = "16", description = "Shards in the demo dataset (default: ${DEFAULT-VALUE}).")
    int shards;

    @Option(names = "--shard-mib", defaultValue = "16", description = "Size of each shard in MiB (default: ${DEFAULT-VALUE}).")
    int shardMib;

    @Option(names = "--prefix-rps", defaultValue = "150",
            description = "Requests/s per prefix the demo store allows before SlowDown (default: ${DEFAULT-VALUE}).")
    double prefixRps;

    @Option(names = "--connection-mibps", defaultValue = "16",
            description = {"Per-connection bandwidth cap of the demo store, MiB/s (default: ${DEFAULT-VALUE}).",
                    "Scaled down with the node's bandwidth so that a 2-core machine shows the effect: in the cloud",
                    "one connection gets ~100 MB/s of a node's 10-100 Gbit/s."})
    long connectionMibps;

    @Option(names = "--sample-seconds", defaultValue = "6", description = "Length of each run of step 3 (default: ${DEFAULT-VALUE}).")
    int sampleSeconds;

    @Option(names = "--dir", description = "Folder for the demo store (default: a temporary folder, removed after).")
    Path dir;

    private static final Prices PRICES = Prices.AWS_S3_STANDARD;

    /** Times the steps: a command is where the real clock enters. */
    private final Clock clock = Clock.system();

    @Override
    public Integer call() throws Exception {
        if (shards < 1 || shardMib < 1 || prefixRps <= 0 || connectionMibps < 1 || sampleSeconds < 1) {
            throw new UserError("--shards, --shard-mib, --prefix-rps, --connection-mibps and --sample-seconds must be positive");
        }
        CloudProfile profile = CloudProfile.cloud().withPrefixRequestRate(prefixRps).withConnectionBandwidth(connectionMibps << 20);
        try (WorkDir work = WorkDir.of(dir, "ferry-demo-");
                EmbeddedStore server = EmbeddedStore.start(work.path(), 0, profile)) {
            Path root = work.path();
            System.out.println("ferry demo: the chain of stores against an object store that behaves like the cloud");
            System.out.println("  store:   " + server.endpoint() + " over " + root + "  (" + profile.describe() + ")");
            System.out.println("  machine: " + Machine.describe());
            System.out.println();
            long shardBytes = (long) shardMib << 20;
            try (S3ObjectStore setup = new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "demo", "demo"))) {
                setup.createBucket("corpus");
                byte[] bytes = new byte[(int) shardBytes];
                Random random = new Random(7);
                for (int i = 0; i < shards; i++) {
                    random.nextBytes(bytes);
                    put(setup, ObjectKey.of("corpus", "train/shard-" + String.format("%05d", i) + ".tar"), bytes);
                }
                System.out.printf(Locale.ROOT, "1. dataset: %d shards of %d MiB in s3://corpus/train/%n%n", shards, shardMib);
            }

            System.out.println("2. read every shard once, 2 shards at a time");
            Step single = readShards(server, Integer.MAX_VALUE - 8, shardBytes, "one GET per shard");
            Step ranged = readShards(server, 2L << 20, shardBytes, "parallel 2 MiB ranged GETs");
            header();
            single.print();
            ranged.print();
            System.out.printf(Locale.ROOT, "   -> parallel ranged GETs: %.1fx the throughput of one stream per shard (%d MiB/s per connection cap)%n%n",
                    ranged.mibps() / single.mibps(), profile.connectionBandwidth() >> 20);

            System.out.printf(Locale.ROOT, "3. 16 threads read 64 KiB samples from one prefix for %d s (the store allows %.0f requests/s per prefix)%n",
                    sampleSeconds, prefixRps);
            Step bare = samples(server, false);
            clock.sleep(Duration.ofMillis(500));
            Step governed = samples(server, true);
            header();
            bare.print();
            governed.print();
            System.out.printf(Locale.ROOT, "   -> the governor keeps %.0f%% of requests clear of SlowDown at %.0f requests/s (limit %.0f); without it %.0f%% are refused%n%n",
                    100 - governed.slowDownPercent(), governed.okPerSecond(), prefixRps, bare.slowDownPercent());
            epochs(server, root.resolve("cache"), shardBytes);
            System.out.println("Egress and cost are what the object store would bill (AWS S3 Standard list prices, internet egress).");
            System.out.println("The training job itself, direct vs through ferry with the four numbers: ./ferry demo");
        }
        return 0;
    }

    /** Step 4: two shuffled epochs through the local tier, then the simulator on a cache half the size. */
    private void epochs(EmbeddedStore server, Path cacheDir, long shardBytes) throws Exception {
        long datasetBytes = shards * shardBytes;
        System.out.printf(Locale.ROOT, "4. two shuffled epochs through the local tier (a %s cache on local disk in front of the chain)%n",
                Sizes.format(datasetBytes + datasetBytes / 8));
        List<Access> trace = SyntheticTrace.shuffledEpochs(shards, 2, shardBytes, 42);
        System.out.printf(Locale.ROOT, "   %-28s %9s %9s %9s %10s %12s%n", "", "MiB/s", "hit rate", "requests", "egress", "est. cost");
        try (StoreChain chain = StoreChain.over(new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "demo", "demo")),
                ChainConfig.DEFAULT.withParallelRead(new ParallelReadConfig(2L << 20, 8)));
                CachingStore cache = new CachingStore(chain, CacheConfig.of(cacheDir, datasetBytes + datasetBytes / 8))) {
            for (int epoch = 1; epoch <= 2; epoch++) {
                MeterSnapshot before = chain.meter().snapshot();
                CacheStats cacheBefore = cache.stats();
                List<Access> order = trace.subList((epoch - 1) * shards, epoch * shards);
                ExecutorService pool = Executors.newFixedThreadPool(2);
                long start = clock.nanoTime();
                try {
                    List<Future<Long>> reads = new ArrayList<>();
                    for (Access a : order) {
                        ObjectKey key = ObjectKey.of("corpus", "train/shard-" + a.key().substring(a.key().length() - 5) + ".tar");
                        reads.add(pool.submit(() -> {
                            try (ObjectContent c = cache.get(GetRequest.whole(key)); InputStream in = c.stream()) {
                                return in.transferTo(OutputStream.nullOutputStream());
                            }
                        }));
                    }
                    for (Future<Long> f : reads) {
                        f.get();
                    }
                } finally {
                    pool.shutdown();
                }
                double seconds = (clock.nanoTime() - start) / 1e9;
                MeterSnapshot after = chain.meter().snapshot();
                CacheStats cacheAfter = cache.stats();
                long hits = cacheAfter.hits() - cacheBefore.hits();
                long misses = cacheAfter.misses() - cacheBefore.misses();
                long egress = after.egressBytes() - before.egressBytes();
                System.out.printf(Locale.ROOT, "   %-28s %9.1f %8.0f%% %9d %6.1f MiB %11.6f$%n", "epoch " + epoch,
                        datasetBytes / seconds / (1 << 20), hits + misses == 0 ? 0 : 100.0 * hits / (hits + misses),
                        after.totalRequests() - before.totalRequests(), egress / (double) (1 << 20),
                        after.estimatedCostUsd() - before.estimatedCostUsd());
            }
        }
        List<Access> three = SyntheticTrace.shuffledEpochs(shards, 3, shardBytes, 42);
        List<String> keys = three.stream().map(Access::key).toList();
        StringBuilder line = new StringBuilder("   ferry sim, 3 epochs, a cache half the dataset: hit rate");
        for (String policy : List.of("lru", "pin", "min")) {
            SimResult r = CacheSimulator.run(three, datasetBytes / 2, Policies.create(policy, keys));
            line.append(String.format(Locale.ROOT, "  %s %.0f%%", policy, 100 * r.hitRate()));
        }
        System.out.println(line);
        System.out.println("   -> epoch 2 is served from local disk: no egress, no requests, no cost; when the cache is smaller");
        System.out.println("      than the dataset, LRU thrashes on shuffled epochs and pin or plan-aware MIN do not.");
        System.out.println();
    }

    private static void put(ObjectStore store, ObjectKey key, byte[] bytes) throws Exception {
        store.put(key, PutBody.ofBytes(bytes));
    }

    /** Reads every shard once through the standard chain, reads split into {@code partSize} ranged GETs. */
    private Step readShards(EmbeddedStore server, long partSize, long shardBytes, String label) throws Exception {
        try (StoreChain chain = StoreChain.over(new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "demo", "demo")),
                ChainConfig.DEFAULT.withParallelRead(new ParallelReadConfig(partSize, 8)))) {
            MeteredStore meter = chain.meter();
            ExecutorService pool = Executors.newFixedThreadPool(2);
            long start = clock.nanoTime();
            try {
                List<Future<Long>> reads = new ArrayList<>();
                for (int i = 0; i < shards; i++) {
                    ObjectKey key = ObjectKey.of("corpus", "train/shard-" + String.format("%05d", i) + ".tar");
                    reads.add(pool.submit(() -> {
                        try (ObjectContent c = chain.get(GetRequest.whole(key)); InputStream in = c.stream()) {
                            return in.transferTo(OutputStream.nullOutputStream());
                        }
                    }));
                }
                for (Future<Long> f : reads) {
                    if (f.get() != shardBytes) {
                        throw new IllegalStateException("a shard came back short");
                    }
                }
            } finally {
                pool.shutdown();
            }
            double seconds = (clock.nanoTime() - start) / 1e9;
            return new Step(label, seconds, meter.snapshot());
        }
    }

    /** 16 threads reading 64 KiB ranges of shards under one prefix, through the chain or bare. */
    private Step samples(EmbeddedStore server, boolean governedChain) throws Exception {
        try (S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "demo", "demo"))) {
            MeteredStore meter = new MeteredStore(s3, PRICES);
            ObjectStore chain = governedChain
                    ? new RetryingStore(new GovernedStore(meter, GovernorConfig.DEFAULT), RetryPolicy.DEFAULT)
                    : meter;
            long end = clock.nanoTime() + Duration.ofSeconds(sampleSeconds).toNanos();
            AtomicLong failed = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            long start = clock.nanoTime();
            for (int t = 0; t < 16; t++) {
                int seed = t;
                threads.add(Thread.ofPlatform().start(() -> {
                    Random random = new Random(seed);
                    while (clock.nanoTime() < end) {
                        ObjectKey key = ObjectKey.of("corpus", "train/shard-" + String.format("%05d", random.nextInt(shards)) + ".tar");
                        long offset = (long) random.nextInt(shardMib * 16) * 65536;
                        try {
                            chain.readBytes(key, ByteRange.of(offset, 65536));
                        } catch (StoreException e) {
                            if (e.kind() != StoreException.Kind.THROTTLED) {
                                failed.incrementAndGet();
                            }
                        } catch (Exception e) {
                            failed.incrementAndGet();
                        }
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            if (failed.get() > 0) {
                throw new IllegalStateException(failed.get() + " sample reads failed for reasons other than SlowDown");
            }
            double seconds = (clock.nanoTime() - start) / 1e9;
            return new Step(governedChain ? "governed + retried" : "bare client", seconds, meter.snapshot());
        }
    }

    private static void header() {
        System.out.printf(Locale.ROOT, "   %-28s %9s %9s %9s %9s %11s %10s %12s%n",
                "", "MiB/s", "requests", "SlowDown", "ok req/s", "first byte", "egress", "est. cost");
    }

    record Step(String label, double seconds, MeterSnapshot meter) {
        long requests() {
            return meter.totalRequests();
        }

        long slowDowns() {
            return meter.failures(StoreException.Kind.THROTTLED);
        }

        double mibps() {
            return meter.egressBytes() / seconds / (1 << 20);
        }

        double okPerSecond() {
            return (requests() - slowDowns()) / seconds;
        }

        double slowDownPercent() {
            return requests() == 0 ? 0 : 100.0 * slowDowns() / requests();
        }

        void print() {
            System.out.printf(Locale.ROOT, "   %-28s %9.1f %9d %8.1f%% %9.0f %8d ms %7.1f MiB %11.6f$%n",
                    label, mibps(), requests(), slowDownPercent(), okPerSecond(), meter.firstByteP50Micros() / 1000,
                    meter.egressBytes() / (double) (1 << 20), meter.estimatedCostUsd());
        }
    }
}
