package dev.ferry.cli.bench;

import dev.ferry.cli.errors.UserError;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.serve.Daemon;
import dev.ferry.serve.ServeConfig;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.StoreChain;
import dev.ferry.time.Clock;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ferry bench cold}: the first read through {@code ferry serve} against the same read straight from
 * the store. The same objects on the embedded store (cloud profile by default) are read by the same client
 * (ferry's S3 client: parallel ranged GETs, a few objects at once) directly from the store, through a
 * daemon whose local tier is empty, and again through it warm. Each round starts a fresh daemon on an empty
 * cache folder (one untimed round of each path first, so the JIT has seen both); the median of the rounds is
 * reported, against the store's aggregate cap.
 *
 * <pre>
 * ./ferry bench cold --json       # 16 x 64 MiB, cloud profile, 3 rounds
 * </pre>
 */
@Command(name = "cold", mixinStandardHelpOptions = true,
        header = "Time cold reads: direct from the store vs through ferry serve.",
        description = {"Cold reads: the same client reading the same objects from the store directly, through 'ferry serve' with "
                + "an empty local tier, and again warm."})
final class ColdBench implements Callable<Integer> {
    @Option(names = "--objects", defaultValue = "16", description = "Number of objects (default: ${DEFAULT-VALUE}).")
    int objects;

    @Option(names = "--size-mib", defaultValue = "64", description = "Size of each object in MiB (default: ${DEFAULT-VALUE}).")
    int sizeMib;

    @Option(names = "--rounds", defaultValue = "3", description = "Rounds (direct, cold, warm each) (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--object-parallelism", defaultValue = "4", description = "Objects the client reads at once (default: ${DEFAULT-VALUE}).")
    int objectParallelism;

    @Option(names = "--profile", defaultValue = "cloud", description = "Embedded store profile: cloud or none (default: ${DEFAULT-VALUE}).")
    String profile;

    @Option(names = "--cap-mib-s", paramLabel = "N",
            description = "The store's aggregate bandwidth cap in MiB/s (default: the profile's; cloud: 400).")
    Integer capMibS;

    @Option(names = "--work-dir", description = "Folder for the store and the cache (default: a temporary folder, removed after).")
    Path workDir;

    @Option(names = "--json", description = "End with one JSON line: cap_mib_s, direct_mib_s, ferry_cold_mib_s, ferry_warm_mib_s.")
    boolean json;

    /** Times the runs: a command is where the real clock enters. */
    private final Clock clock = Clock.system();

    @Override
    public Integer call() throws Exception {
        if (objects < 1 || sizeMib < 1 || rounds < 1 || objectParallelism < 1) {
            throw new UserError("--objects, --size-mib, --rounds and --object-parallelism must be positive");
        }
        CloudProfile cloud;
        try {
            cloud = CloudProfile.named(profile);
        } catch (IllegalArgumentException e) {
            throw new UserError("--profile: " + e.getMessage());
        }
        if (capMibS != null) {
            if (capMibS < 1) {
                throw new UserError("--cap-mib-s must be positive: " + capMibS);
            }
            cloud = cloud.withAggregateBandwidth((long) capMibS << 20);
        }
        long size = (long) sizeMib << 20;
        // the daemon signs its upstream requests with the default credential chain; the embedded store takes any
        if (System.getenv("AWS_ACCESS_KEY_ID") == null && System.getProperty("aws.accessKeyId") == null) {
            System.setProperty("aws.accessKeyId", "bench");
            System.setProperty("aws.secretAccessKey", "bench");
        }
        double cap = cloud.aggregateBandwidth() / (double) (1 << 20);
        try (WorkDir workDirectory = WorkDir.of(workDir, "ferry-bench-cold-")) {
            Path work = workDirectory.path();
            Path root = work.resolve("store");
            System.out.printf("writing %d objects of %d MiB under %s ...%n", objects, sizeMib, root);
            GetBench.writeObjects(root, objects, size);
            List<Double> direct = new ArrayList<>();
            List<Double> cold = new ArrayList<>();
            List<Double> warm = new ArrayList<>();
            try (EmbeddedStore server = EmbeddedStore.start(root, 0, cloud)) {
                System.out.println("machine: " + Machine.describe());
                System.out.println("store:   ferry store --profile " + profile + " at " + server.endpoint() + " (in this JVM), aggregate cap "
                        + (cap == 0 ? "none" : String.format(Locale.ROOT, "%.0f MiB/s", cap)));
                System.out.printf("client:  ferry's S3 client (the standard chain: 8 MiB ranged GETs, 8 in flight per object), %d objects at once%n",
                        objectParallelism);
                System.out.println("ferry:   ferry serve --upstream <store>, a fresh daemon on an empty cache folder each round (in this JVM)");
                // untimed: the JIT on both paths, connections, the store's files into the page cache
                read(server.endpoint(), size);
                throughFerry(server, work.resolve("cache-warm-up"), size);
                for (int round = 1; round <= rounds; round++) {
                    direct.add(read(server.endpoint(), size));
                    double[] ferry = throughFerry(server, work.resolve("cache-" + round), size);
                    cold.add(ferry[0]);
                    warm.add(ferry[1]);
                    System.out.printf(Locale.ROOT, "round %d  direct %7.1f MiB/s   ferry cold %7.1f MiB/s   ferry warm %7.1f MiB/s%n",
                            round, direct.get(round - 1), cold.get(round - 1), warm.get(round - 1));
                }
            }
            double d = GetBench.median(direct);
            double c = GetBench.median(cold);
            double w = GetBench.median(warm);
            System.out.println();
            System.out.println("| read (median of " + rounds + ") | MiB/s | vs direct | vs cap |");
            System.out.println("|---|---|---|---|");
            row("direct from the store", d, d, cap);
            row("through ferry serve, cold (empty local tier)", c, d, cap);
            row("through ferry serve, warm", w, d, cap);
            System.out.printf(Locale.ROOT, "targets: cold >= 0.9x direct (%s), cold >= 0.8x the cap (%s)%n",
                    c >= 0.9 * d ? "met" : "not met", cap == 0 ? "no cap" : c >= 0.8 * cap ? "met" : "not met");
            if (json) {
                System.out.printf(Locale.ROOT, "{\"cap_mib_s\":%.1f,\"direct_mib_s\":%.1f,\"ferry_cold_mib_s\":%.1f,\"ferry_warm_mib_s\":%.1f}%n",
                        cap, d, c, w);
            }
        }
        return 0;
    }

    private static void row(String what, double rate, double direct, double cap) {
        System.out.printf(Locale.ROOT, "| %s | %.1f | %.2fx | %s |%n", what, rate, rate / direct,
                cap == 0 ? "-" : String.format(Locale.ROOT, "%.2fx", rate / cap));
    }

    /** Every object read through a fresh daemon on an empty cache folder, then again: {cold, warm} MiB/s. */
    private double[] throughFerry(EmbeddedStore server, Path cacheDir, long size) throws Exception {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("upstream", server.endpoint().toString());
        settings.put("port", "0");
        settings.put("cache-dir", cacheDir.toString());
        settings.put("cache-size", Long.toString(2 * objects * size));
        try (Daemon daemon = Daemon.start(ServeConfig.defaults().with(settings))) {
            return new double[] {read(daemon.endpoint(), size), read(daemon.endpoint(), size)};
        } finally {
            WorkDir.deleteTree(cacheDir);
        }
    }

    /** Reads every object through a fresh client at {@code endpoint}, bytes discarded; MiB/s. */
    private double read(URI endpoint, long size) throws Exception {
        try (ObjectStore client = StoreChain.over(new S3ObjectStore(S3StoreConfig.endpoint(endpoint, "bench", "bench")), ChainConfig.DEFAULT)) {
            ExecutorService pool = Executors.newFixedThreadPool(objectParallelism);
            long start = clock.nanoTime();
            try {
                List<Future<Long>> reads = new ArrayList<>();
                for (int i = 0; i < objects; i++) {
                    ObjectKey key = ObjectKey.of("bench", "objects/" + String.format("%04d.bin", i));
                    reads.add(pool.submit(() -> {
                        try (ObjectContent c = client.get(GetRequest.whole(key)); InputStream in = c.stream()) {
                            return in.transferTo(OutputStream.nullOutputStream());
                        }
                    }));
                }
                for (Future<Long> f : reads) {
                    if (f.get() != size) {
                        throw new IllegalStateException("read " + f.get() + " bytes of an object of " + size);
                    }
                }
            } finally {
                pool.shutdown();
                pool.awaitTermination(1, TimeUnit.MINUTES);
            }
            return objects * (double) size / ((clock.nanoTime() - start) / 1e9) / (1 << 20);
        }
    }
}
