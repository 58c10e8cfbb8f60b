package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.TinyFileSystem;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cache on a real, full file system: a 1 MiB tmpfs (mounting needs root; elsewhere the test is skipped
 * with the reason printed). Reads must go on from upstream; the failures are counted.
 */
class DiskFullTest {
    @TempDir
    Path tmp;
    TinyFileSystem tiny;
    Path mount;

    @BeforeEach
    void mountTinyFileSystem() throws Exception {
        tiny = TinyFileSystem.mount(tmp.resolve("tiny"), "1m", "DiskFullTest");
        mount = tiny.path();
    }

    @AfterEach
    void unmount() throws Exception {
        if (tiny != null) {
            tiny.close();
        }
    }

    @Test
    void fullDisk_readsGoOnFromUpstream_andFailuresAreCounted() throws IOException {
        FileObjectStore origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        ObjectKey key = ObjectKey.of("data", "big");
        byte[] bytes = CachingStoreTest.random(4 << 20, 3); // 4 MiB through a 1 MiB disk
        origin.put(key, PutBody.ofBytes(bytes));
        // the configured capacity is larger than the disk: the disk fills before the cache thinks it is full
        try (CachingStore cache = new CachingStore(origin, CacheConfig.of(mount.resolve("cache"), 64L << 20).withBlockSize(256 * 1024))) {
            assertThat(cache.isPassThrough()).isFalse();
            assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
            assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
            CacheStats s = cache.stats();
            assertThat(s.writeFailures()).isPositive();
            assertThat(s.residentBytes()).isLessThanOrEqualTo(1 << 20);
        }
    }
}
