package dev.ferry.cli.bench;

import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.SyntheticBlocks;
import dev.ferry.cache.policy.LruPolicy;
import dev.ferry.cli.errors.UserError;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ferry bench restart}: how fast the local tier is warm again after a crash and after a clean close. It
 * fills a cache folder with {@link SyntheticBlocks} (no snapshot: as after a crash), opens it (the index is
 * rebuilt from every block's header), closes it cleanly (a snapshot is written) and opens it again (the index
 * comes from the snapshot), timing each open.
 */
@Command(name = "restart", mixinStandardHelpOptions = true,
        description = "Time to reopen a cache directory of many blocks: after a crash (index rebuilt from block headers) and after a clean close (from the snapshot).")
final class RestartBench implements Callable<Integer> {
    @Option(names = "--blocks", defaultValue = "100000", description = "Blocks in the cache (default: ${DEFAULT-VALUE}).")
    int blocks;

    @Option(names = "--block-size", defaultValue = "4096", description = "Bytes per block (default: ${DEFAULT-VALUE}; the cost is per block, not per byte).")
    int blockSize;

    @Option(names = "--drop-caches", description = "Drop the OS page cache before each open (needs root), so the disk is read cold.")
    boolean dropCaches;

    @Option(names = "--work-dir", description = "Where to build the cache (default: a temporary folder, removed after).")
    Path workDir;

    /** Times the opens, and is the caches' clock: a command is where the real clock enters. */
    private final Clock clock = Clock.system();

    @Override
    public Integer call() throws Exception {
        if (blocks < 1 || blockSize < 4096) {
            throw new UserError("--blocks must be positive and --block-size at least 4096");
        }
        try (WorkDir workDirectory = WorkDir.of(workDir, "ferry-restart-")) {
            Path work = workDirectory.path();
            System.out.println("machine: " + Machine.describe());
            System.out.printf(Locale.ROOT, "writing %d blocks of %d bytes under %s ...%n", blocks, blockSize, work);
            Path dir = work.resolve("cache");
            CacheConfig config = SyntheticBlocks.write(dir, blocks, blockSize);
            ObjectStore origin = new FileObjectStore(work.resolve("origin"));
            Open afterCrash = open(origin, config);
            Open clean = open(origin, config);
            System.out.println(dropCaches ? "page cache dropped before each open" : "page cache warm (add --drop-caches for a cold disk)");
            System.out.printf(Locale.ROOT, "open after a crash (scan %d block headers): %8.0f ms, %d blocks warm%n",
                    blocks, afterCrash.millis(), afterCrash.blocks());
            System.out.printf(Locale.ROOT, "open after a clean close (read the snapshot): %6.0f ms, %d blocks warm%n",
                    clean.millis(), clean.blocks());
        }
        return 0;
    }

    /** How long one open took, and the blocks the cache held after it. */
    private record Open(double millis, long blocks) {
    }

    /** Opens the cache on {@code config}, timed, and closes it cleanly (which writes the snapshot). */
    private Open open(ObjectStore origin, CacheConfig config) throws Exception {
        maybeDropCaches();
        long start = clock.nanoTime();
        try (CachingStore cache = new CachingStore(origin, config, new LruPolicy<>(), clock)) {
            double millis = (clock.nanoTime() - start) / 1e6;
            return new Open(millis, cache.stats().residentBlocks());
        }
    }

    private void maybeDropCaches() {
        if (!dropCaches) {
            return;
        }
        try {
            new ProcessBuilder("sync").inheritIO().start().waitFor();
            Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
        } catch (Exception e) {
            throw new UserError("--drop-caches: cannot drop the page cache (" + e.getMessage() + "); run as root or leave it out", 1);
        }
    }
}
