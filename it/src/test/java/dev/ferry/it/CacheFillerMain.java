package dev.ferry.it;

import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CachingStore;
import dev.ferry.store.ByteRange;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.file.FileObjectStore;
import java.nio.file.Path;
import java.util.Random;

/**
 * The child of {@link CacheKillTest}: fills a cache from a directory origin with random reads, forever,
 * until it is killed. Prints "ready" once the cache is open, then "read" after each read: the test kills it at a
 * point in its stream of reads, not at a time, so a slow machine kills it as far into its filling as a fast one.
 */
public final class CacheFillerMain {
    private CacheFillerMain() {
    }

    public static void main(String[] args) throws Exception {
        Path origin = Path.of(args[0]);
        Path cacheDir = Path.of(args[1]);
        int objects = Integer.parseInt(args[2]);
        long seed = Long.parseLong(args[3]);
        Random random = new Random(seed);
        CachingStore cache = new CachingStore(new FileObjectStore(origin),
                CacheConfig.of(cacheDir, 48L * 65536).withBlockSize(65536).withMaxRunBlocks(4));
        if (cache.isPassThrough()) {
            throw new IllegalStateException("the cache could not open " + cacheDir);
        }
        System.out.println("ready");
        System.out.flush();
        while (true) {
            ObjectKey key = ObjectKey.of("data", "obj/" + random.nextInt(objects));
            long offset = random.nextLong(cache.head(key).size()); // a range that starts past the end is an error
            cache.readBytes(key, random.nextBoolean() ? null : ByteRange.of(offset, 1 + random.nextInt(300_000)));
            System.out.println("read");
        }
    }
}
