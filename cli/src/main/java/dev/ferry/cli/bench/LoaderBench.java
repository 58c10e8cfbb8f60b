package dev.ferry.cli.bench;

import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.VerifyMode;
import dev.ferry.cli.errors.UserError;
import dev.ferry.loader.Decoder;
import dev.ferry.loader.EpochRun;
import dev.ferry.loader.Loader;
import dev.ferry.loader.LoaderConfig;
import dev.ferry.loader.Sample;
import dev.ferry.loader.SyntheticDataset;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.World;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import dev.ferry.util.Sizes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ferry bench loader}: the loader reading a fully cached dataset (every read a local-tier hit) against
 * {@code cat} of the cache's block files, the same bytes from the same disk, in alternating rounds; and
 * samples/s for small samples.
 */
@Command(name = "loader", mixinStandardHelpOptions = true,
        description = "The loader on a fully cached dataset vs 'cat' of the same files; and samples/s for small samples.")
final class LoaderBench implements Callable<Integer> {
    @Option(names = "--rounds", defaultValue = "5", description = "Timed rounds of each, alternating, after 3 untimed epochs (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--work-dir", description = "Where to build the dataset and cache (default: a temporary folder, removed after).")
    Path workDir;

    @Option(names = "--verify", defaultValue = "on-load", description = "The local tier's verify setting: on-load (the default), "
            + "always, first-read or never (default: ${DEFAULT-VALUE}).")
    String verify;

    /** Times the runs: a command is where the real clock enters. */
    private final Clock clock = Clock.system();

    @Override
    public Integer call() throws Exception {
        if (rounds < 1) {
            throw new UserError("--rounds must be positive");
        }
        try {
            VerifyMode.parse(verify);
        } catch (IllegalArgumentException e) {
            throw new UserError(e.getMessage());
        }
        try (WorkDir workDirectory = WorkDir.of(workDir, "ferry-loader-")) {
            Path work = workDirectory.path();
            System.out.println("machine: " + Machine.describe());
            System.out.println("verify: " + VerifyMode.parse(verify).settingName());
            run(work.resolve("large"), "images (100-200 KiB samples)", 32, 64, 100 * 1024, 4 << 20);
            run(work.resolve("small"), "small samples (10-20 KiB)", 16, 2000, 10 * 1024, 4 << 20);
        }
        return 0;
    }

    private void run(Path dir, String label, int shards, int samplesPerShard, int sampleBytes, int blockSize) throws Exception {
        FileObjectStore origin = new FileObjectStore(dir.resolve("origin"));
        origin.createBucket("bench");
        Manifest manifest = SyntheticDataset.write(origin, "bench", "train", shards, samplesPerShard, sampleBytes, 1);
        System.out.printf(Locale.ROOT, "%n%s: %d shards, %d samples, %s%n", label, shards, manifest.totalSamples(),
                Sizes.format(manifest.totalBytes()));
        Path cacheDir = dir.resolve("cache");
        try (CachingStore cache = new CachingStore(origin, CacheConfig.of(cacheDir, manifest.totalBytes() * 2).withBlockSize(blockSize)
                .withVerify(VerifyMode.parse(verify)))) {
            Loader<Sample> loader = new Loader<>(cache, manifest, PlanConfig.DEFAULT, World.single(), 0,
                    LoaderConfig.DEFAULT.withBatchSize(64).withDecodeWorkers(2).withFetchConcurrency(4).withAheadSamples(1024),
                    Decoder.identity());
            epoch(loader, 1); // fills the cache (on-load checks each block on its next use)
            epoch(loader, 2); // and two more untimed epochs for the JIT
            epoch(loader, 3);
            List<Double> loaderRates = new ArrayList<>();
            List<Double> catRates = new ArrayList<>();
            List<Double> sampleRates = new ArrayList<>();
            for (int round = 1; round <= rounds; round++) {
                long start = clock.nanoTime();
                long[] got = epoch(loader, round + 3);
                double seconds = (clock.nanoTime() - start) / 1e9;
                loaderRates.add(got[1] / seconds / (1 << 20));
                sampleRates.add(got[0] / seconds);
                catRates.add(cat(cacheDir.resolve("blocks")));
                System.out.printf(Locale.ROOT, "round %d  loader %8.1f MiB/s %9.0f samples/s   cat %8.1f MiB/s%n", round,
                        loaderRates.get(round - 1), sampleRates.get(round - 1), catRates.get(round - 1));
            }
            double l = GetBench.median(loaderRates);
            double c = GetBench.median(catRates);
            System.out.printf(Locale.ROOT, "median   loader %8.1f MiB/s %9.0f samples/s   cat %8.1f MiB/s   ratio loader/cat %.2f%n",
                    l, GetBench.median(sampleRates), c, l / c);
        }
    }

    /** One epoch through the loader; returns samples and bytes delivered. */
    private static long[] epoch(Loader<Sample> loader, int epoch) {
        long samples = 0;
        long bytes = 0;
        try (EpochRun<Sample> run = loader.epoch(epoch)) {
            while (run.hasNext()) {
                for (Sample s : run.next().samples()) {
                    samples++;
                    bytes += s.bytes();
                }
            }
        }
        return new long[] {samples, bytes};
    }

    /** {@code cat} of every block file to /dev/null; MiB/s. */
    private double cat(Path blocks) throws Exception {
        List<String> command = new ArrayList<>(List.of("cat"));
        long bytes = 0;
        try (Stream<Path> walk = Files.walk(blocks)) {
            for (Path p : walk.filter(Files::isRegularFile).toList()) {
                command.add(p.toString());
                bytes += Files.size(p);
            }
        }
        long start = clock.nanoTime();
        Process p = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectErrorStream(true).start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("cat failed with " + p.exitValue());
        }
        return bytes / ((clock.nanoTime() - start) / 1e9) / (1 << 20);
    }
}
