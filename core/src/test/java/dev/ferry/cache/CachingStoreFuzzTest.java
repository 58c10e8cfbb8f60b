package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random interleavings of reads (whole, ranged, abandoned part-way), overwrites at the origin, evictions
 * (small capacities), clean and crash restarts, and corrupted block files, checked against an in-memory
 * reference of every version ever written: every byte read must equal the origin's bytes for the version
 * the read reported. A read may fail with "object changed" (412); it may never return wrong bytes.
 */
class CachingStoreFuzzTest {
    @TempDir
    Path tmp;

    @Test
    void randomInterleavings_neverServeWrongBytes() throws IOException {
        for (int seed = 1; seed <= 12; seed++) {
            run(seed, tmp.resolve("run-" + seed));
        }
    }

    private void run(long seed, Path dir) throws IOException {
        Random random = new Random(seed);
        FileObjectStore origin = new FileObjectStore(dir.resolve("origin"));
        origin.createBucket("fuzz");
        Map<String, byte[]> versions = new HashMap<>();
        List<ObjectKey> keys = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ObjectKey k = ObjectKey.of("fuzz", "k/" + i);
            keys.add(k);
            write(origin, versions, k, random);
        }
        String policy = List.of("lru", "pin", "sieve").get(random.nextInt(3));
        CacheConfig config = CacheConfig.of(dir.resolve("cache"), (10 + random.nextInt(40)) * 4096L)
                .withBlockSize(4096)
                .withMaxRunBlocks(1 + random.nextInt(8))
                .withPolicy(policy)
                .withMetadataTtl(random.nextBoolean() ? Duration.ZERO : Duration.ofHours(1));
        CachingStore cache = new CachingStore(origin, config);
        long reads = 0;
        try {
            for (int op = 0; op < 250; op++) {
                int dice = random.nextInt(100);
                if (dice < 65) {
                    reads += read(cache, versions, keys.get(random.nextInt(keys.size())), random, seed, op) ? 1 : 0;
                } else if (dice < 78) {
                    write(origin, versions, keys.get(random.nextInt(keys.size())), random);
                } else if (dice < 84) {
                    cache.close();
                    cache = new CachingStore(origin, config);
                } else if (dice < 90) {
                    cache.abandonWithoutSnapshot();
                    cache = new CachingStore(origin, config);
                } else if (dice < 95) {
                    cache.abandonWithoutSnapshot();
                    corruptOne(dir.resolve("cache/blocks"), random);
                    cache = new CachingStore(origin, config);
                } else {
                    ObjectKey k = keys.get(random.nextInt(keys.size()));
                    origin.delete(k);
                    write(origin, versions, k, random);
                }
                assertThat(cache.stats().residentBytes()).as("seed %d op %d", seed, op).isLessThanOrEqualTo(config.capacity());
                assertThat(cache.isPassThrough()).isFalse();
            }
        } finally {
            cache.close();
        }
        assertThat(reads).as("seed %d: successful reads", seed).isGreaterThan(50);
    }

    private static void write(FileObjectStore origin, Map<String, byte[]> versions, ObjectKey key, Random random) throws IOException {
        byte[] bytes = new byte[random.nextInt(10) == 0 ? 0 : random.nextInt(60_000)];
        random.nextBytes(bytes);
        ObjectMeta meta = origin.put(key, PutBody.ofBytes(bytes));
        versions.put(meta.etag(), bytes);
    }

    /** One read, checked; false when it failed with "object changed", which is allowed. */
    private static boolean read(CachingStore cache, Map<String, byte[]> versions, ObjectKey key, Random random, long seed, int op)
            throws IOException {
        ByteRange range = null;
        if (random.nextBoolean()) {
            range = ByteRange.of(random.nextInt(30_000), 1 + random.nextInt(40_000));
        }
        try (ObjectContent c = cache.get(new GetRequest(key, range, null))) {
            byte[] version = versions.get(c.meta().etag());
            assertThat(version).as("seed %d op %d: a version the origin really had", seed, op).isNotNull();
            long from = c.range() == null ? 0 : c.range().offset();
            int length = (int) c.length();
            boolean abandon = random.nextInt(8) == 0;
            int wanted = abandon ? random.nextInt(length + 1) : length;
            byte[] got = c.stream().readNBytes(wanted);
            assertThat(got).as("seed %d op %d: bytes of %s %s", seed, op, key, c.range())
                    .isEqualTo(Arrays.copyOfRange(version, (int) from, (int) from + wanted));
            if (!abandon) {
                assertThat(c.stream().read()).isEqualTo(-1);
            }
            return true;
        } catch (StoreException e) {
            if (e.kind() == StoreException.Kind.PRECONDITION_FAILED
                    || (e.kind() == StoreException.Kind.FATAL && e.httpStatus() == 416)) {
                return false; // the object changed under a cached view, or the range starts past its end
            }
            throw e;
        }
    }

    private static void corruptOne(Path blocks, Random random) throws IOException {
        if (!Files.isDirectory(blocks)) {
            return;
        }
        List<Path> files;
        try (Stream<Path> walk = Files.walk(blocks)) {
            files = walk.filter(p -> p.toString().endsWith(".blk")).sorted().toList();
        }
        if (!files.isEmpty()) {
            CachingStoreTest.flipLastByte(files.get(random.nextInt(files.size())));
        }
    }
}
