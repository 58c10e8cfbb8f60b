package dev.ferry.cli.bench;

import dev.ferry.cli.errors.UserError;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.ParallelReadConfig;
import dev.ferry.store.chain.StoreChain;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ferry bench get}: GET throughput of {@link S3ObjectStore} (parallel ranged GETs) against the
 * embedded store with {@code --profile none}, side by side in the same run with
 * {@code aws s3 cp --recursive} of the same objects. Both write every object to a local folder, so both do
 * the same work; rounds alternate so that noise on this shared machine hits both alike.
 */
@Command(name = "get", mixinStandardHelpOptions = true,
        description = {"GET throughput: ferry's S3 client vs 'aws s3 cp --recursive', same objects, same server, alternating rounds."})
final class GetBench implements Callable<Integer> {
    @Option(names = "--objects", defaultValue = "64", description = "Number of objects (default: ${DEFAULT-VALUE}).")
    int objects;

    @Option(names = "--size-mib", defaultValue = "16", description = "Size of each object in MiB (default: ${DEFAULT-VALUE}).")
    int sizeMib;

    @Option(names = "--rounds", defaultValue = "3", description = "Rounds of each client, alternating (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--warmup", defaultValue = "1", description = "Untimed rounds of each client first, for the JIT and the page cache (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--object-parallelism", defaultValue = "4",
            description = "Objects ferry reads at once; each read is itself parallel ranged GETs (default: ${DEFAULT-VALUE}).")
    int objectParallelism;

    @Option(names = "--part-mib", defaultValue = "8", description = "Ranged GET size in MiB (default: ${DEFAULT-VALUE}).")
    int partMib;

    @Option(names = "--read-concurrency", defaultValue = "8", description = "Ranged GETs in flight per object (default: ${DEFAULT-VALUE}).")
    int readConcurrency;

    @Option(names = "--profile", defaultValue = "none", description = "Embedded store profile: none or cloud (default: ${DEFAULT-VALUE}).")
    String profile;

    @Option(names = "--work-dir", description = "Folder for the store and the copies (default: a temporary folder, removed after).")
    Path workDir;

    @Option(names = "--no-aws", description = "Skip the awscli side.")
    boolean noAws;

    /** Times the runs: a command is where the real clock enters. */
    private final Clock clock = Clock.system();

    @Override
    public Integer call() throws Exception {
        if (objects < 1 || sizeMib < 1 || rounds < 1 || warmup < 0 || objectParallelism < 1 || partMib < 1 || readConcurrency < 1) {
            throw new UserError("--objects, --size-mib, --rounds, --object-parallelism, --part-mib and --read-concurrency must be positive");
        }
        String awsPath = noAws ? null : which("aws");
        if (!noAws && awsPath == null) {
            throw new UserError("aws is not on PATH: install awscli (pip install awscli) or pass --no-aws");
        }
        CloudProfile cloud;
        try {
            cloud = CloudProfile.named(profile);
        } catch (IllegalArgumentException e) {
            throw new UserError("--profile: " + e.getMessage());
        }
        long size = (long) sizeMib << 20;
        try (WorkDir workDirectory = WorkDir.of(workDir, "ferry-bench-")) {
            Path work = workDirectory.path();
            Path root = work.resolve("store");
            System.out.printf("writing %d objects of %d MiB under %s ...%n", objects, sizeMib, root);
            writeObjects(root, objects, size);
            try (EmbeddedStore server = EmbeddedStore.start(root, 0, cloud);
                    StoreChain s3 = StoreChain.over(new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "bench", "bench")),
                            ChainConfig.DEFAULT.withParallelRead(new ParallelReadConfig((long) partMib << 20, readConcurrency)))) {
                System.out.println("machine: " + Machine.describe());
                System.out.println("store:   ferry store --profile " + profile + " at " + server.endpoint() + " (in this JVM)");
                System.out.printf("ferry:   the standard chain over S3ObjectStore, %d objects at once, %d MiB ranged GETs, %d in flight per object%n",
                        objectParallelism, partMib, readConcurrency);
                if (awsPath != null) {
                    System.out.println("aws:     " + awsPath + " " + awsVersion(awsPath) + ", default settings (10 concurrent requests, 8 MiB parts)");
                }
                for (int w = 0; w < warmup; w++) {
                    ferryCopy(s3, work.resolve("copy-ferry"), size);
                    WorkDir.deleteTree(work.resolve("copy-ferry"));
                    if (awsPath != null) {
                        awsCopy(awsPath, server.endpoint(), work.resolve("copy-aws"), size);
                        WorkDir.deleteTree(work.resolve("copy-aws"));
                    }
                }
                List<Double> ferryRates = new ArrayList<>();
                List<Double> awsRates = new ArrayList<>();
                for (int round = 1; round <= rounds; round++) {
                    Path dest = work.resolve("copy-ferry");
                    double seconds = ferryCopy(s3, dest, size);
                    ferryRates.add(objects * (double) size / seconds / (1 << 20));
                    WorkDir.deleteTree(dest);
                    System.out.printf(Locale.ROOT, "round %d  ferry %7.1f MiB/s", round, ferryRates.get(ferryRates.size() - 1));
                    if (awsPath != null) {
                        Path awsDest = work.resolve("copy-aws");
                        double awsSeconds = awsCopy(awsPath, server.endpoint(), awsDest, size);
                        awsRates.add(objects * (double) size / awsSeconds / (1 << 20));
                        WorkDir.deleteTree(awsDest);
                        System.out.printf(Locale.ROOT, "   aws %7.1f MiB/s", awsRates.get(awsRates.size() - 1));
                    }
                    System.out.println();
                }
                double ferryMedian = median(ferryRates);
                System.out.printf(Locale.ROOT, "median   ferry %7.1f MiB/s", ferryMedian);
                if (!awsRates.isEmpty()) {
                    double awsMedian = median(awsRates);
                    System.out.printf(Locale.ROOT, "   aws %7.1f MiB/s   ratio ferry/aws %.2f", awsMedian, ferryMedian / awsMedian);
                }
                System.out.println();
            }
        }
        return 0;
    }

    /** {@code objects} objects of {@code size} random bytes, written into the folder store at {@code root}, bucket "bench". */
    static void writeObjects(Path root, int objects, long size) throws IOException {
        FileObjectStore files = new FileObjectStore(root);
        files.createBucket("bench");
        byte[] block = new byte[1 << 20];
        Random random = new Random(1);
        for (int i = 0; i < objects; i++) {
            Path file = root.resolve("bench/objects/" + String.format("%04d.bin", i));
            Files.createDirectories(file.getParent());
            try (OutputStream out = Files.newOutputStream(file)) {
                for (long written = 0; written < size; written += block.length) {
                    random.nextBytes(block);
                    out.write(block, 0, (int) Math.min(block.length, size - written));
                }
            }
        }
    }

    private double ferryCopy(ObjectStore s3, Path dest, long size) throws Exception {
        Files.createDirectories(dest);
        ExecutorService pool = Executors.newFixedThreadPool(objectParallelism);
        long start = clock.nanoTime();
        try {
            List<Future<Long>> copies = new ArrayList<>();
            for (int i = 0; i < objects; i++) {
                String name = String.format("%04d.bin", i);
                copies.add(pool.submit(() -> {
                    try (ObjectContent c = s3.get(GetRequest.whole(ObjectKey.of("bench", "objects/" + name)));
                            InputStream in = c.stream();
                            OutputStream out = Files.newOutputStream(dest.resolve(name))) {
                        return in.transferTo(out);
                    }
                }));
            }
            for (Future<Long> f : copies) {
                if (f.get() != size) {
                    throw new IllegalStateException("ferry copied " + f.get() + " bytes of an object of " + size);
                }
            }
        } finally {
            pool.shutdown();
            pool.awaitTermination(1, TimeUnit.MINUTES);
        }
        return (clock.nanoTime() - start) / 1e9;
    }

    private double awsCopy(String aws, URI endpoint, Path dest, long size) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(aws, "--endpoint-url", endpoint.toString(), "s3", "cp", "--recursive",
                "--only-show-errors", "s3://bench/objects/", dest.toString()).redirectErrorStream(true);
        pb.environment().put("AWS_ACCESS_KEY_ID", "bench");
        pb.environment().put("AWS_SECRET_ACCESS_KEY", "bench");
        pb.environment().put("AWS_DEFAULT_REGION", "us-east-1");
        long start = clock.nanoTime();
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes());
        int exit = p.waitFor();
        double seconds = (clock.nanoTime() - start) / 1e9;
        if (exit != 0) {
            throw new IOException("aws s3 cp failed (exit " + exit + "): " + output.strip());
        }
        try (Stream<Path> copied = Files.list(dest)) {
            long total = copied.mapToLong(f -> f.toFile().length()).sum();
            if (total != objects * size) {
                throw new IOException("aws copied " + total + " bytes, expected " + objects * size);
            }
        }
        return seconds;
    }

    private static String awsVersion(String aws) {
        try {
            Process p = new ProcessBuilder(aws, "--version").redirectErrorStream(true).start();
            String v = new String(p.getInputStream().readAllBytes()).strip();
            p.waitFor();
            return "(" + v.split(" ")[0] + ")";
        } catch (IOException | InterruptedException e) {
            return "";
        }
    }

    static String which(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

}
