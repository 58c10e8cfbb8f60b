package dev.ferry.cache;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * How long the local tier takes to open a directory of many blocks: after a crash (the index is rebuilt from
 * every block's header) and after a clean close (the index comes from the snapshot). Run by
 * {@code ferry bench restart}. The blocks are written straight to disk without fsync, so that setting up
 * 100,000 of them takes seconds rather than minutes; their format is the cache's own.
 */
public final class RestartBenchmark {
    private RestartBenchmark() {
    }

    /** Timings in milliseconds, and the blocks the cache held after each open. */
    public record Result(long blocks, double afterCrashMillis, long blocksAfterCrash, double cleanMillis, long blocksAfterClean) {
    }

    public static Result run(Path dir, int blocks, int blockSize, ObjectStore upstream, Runnable beforeEachOpen) throws IOException {
        Path blocksDir = Files.createDirectories(dir.resolve(CachingStore.BLOCKS));
        Files.createDirectories(dir.resolve(CachingStore.TMP));
        byte[] data = new byte[blockSize];
        new Random(1).nextBytes(data);
        int crc = BlockFile.crc(data, 0, data.length);
        int perObject = 100;
        for (int i = 0; i < blocks; i++) {
            BlockId id = new BlockId(ObjectKey.of("bench", "objects/" + (i / perObject)), "etag-" + (i / perObject), i % perObject);
            byte[] header = BlockFile.encodeHeader(id, (long) perObject * blockSize, blockSize, data.length, crc);
            Path path = BlockFile.pathFor(blocksDir, id);
            Files.createDirectories(path.getParent());
            try (var ch = java.nio.channels.FileChannel.open(path, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.WRITE, java.nio.file.StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(new java.nio.ByteBuffer[] {java.nio.ByteBuffer.wrap(header), java.nio.ByteBuffer.wrap(data)});
            }
        }
        CacheConfig config = CacheConfig.of(dir, (long) blocks * blockSize * 2).withBlockSize(blockSize);
        beforeEachOpen.run();
        long start = System.nanoTime();
        CachingStore afterCrash = new CachingStore(upstream, config, new dev.ferry.cache.policy.LruPolicy<>(), Clock.system());
        double crashMillis = (System.nanoTime() - start) / 1e6;
        long crashBlocks = afterCrash.stats().residentBlocks();
        afterCrash.close();
        beforeEachOpen.run();
        start = System.nanoTime();
        CachingStore clean = new CachingStore(upstream, config, new dev.ferry.cache.policy.LruPolicy<>(), Clock.system());
        double cleanMillis = (System.nanoTime() - start) / 1e6;
        long cleanBlocks = clean.stats().residentBlocks();
        clean.close();
        return new Result(blocks, crashMillis, crashBlocks, cleanMillis, cleanBlocks);
    }

}
