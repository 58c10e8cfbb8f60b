package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ByteRange;
import dev.ferry.store.FileRegionReadable;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.TrackingStore.Op;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Await;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20's probe against the in-process read paths, under the default {@code verify} (ON_LOAD): block files
 * of a cached object damaged while the cache is open (16 bytes flipped in each, the page cache dropped when
 * this process may) are never served, by {@link CachingStore#get} (what the loader reads) or by
 * a read of resident blocks only ({@link GetRequest.Reach#CACHED}: the sendfile path); each is dropped, counted as evicted-corrupt and
 * fetched again. And a block whose bytes are provably those checked is not read again.
 */
class CheckedHitsTest {
    static final int BLOCK = 64 * 1024;
    static final int BLOCKS = 17;

    @TempDir
    Path tmp;
    TrackingStore tracking;
    CachingStore cache;
    ObjectKey key = ObjectKey.of("data", "train/shard-0.tar");
    byte[] bytes;

    @BeforeEach
    void setUp() throws IOException {
        FileObjectStore origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        bytes = new byte[(BLOCKS - 1) * BLOCK + 1234];
        new Random(1).nextBytes(bytes);
        origin.put(key, PutBody.ofBytes(bytes));
        tracking = new TrackingStore(origin);
        cache = new CachingStore(tracking, CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK));
    }

    @AfterEach
    void tearDown() throws IOException {
        cache.close();
    }

    /**
     * Fills the cache with the object, then reads it once more past the settling time: every block trusted, after
     * a check where ctime may not show a write in the tick of the fetch's own ({@link BlockCheck#probeCtime}).
     */
    void cachedAndChecked() throws Exception {
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        CorruptBlocks.waitToSettle();
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(cache.stats().verifiedBlocks()).as("each block checked once before its first hit, unless ctime shows every change")
                .isEqualTo(checkedAfterFill());
        tracking.reset();
    }

    /** Blocks checked by the second read of a fill: none where a fetched block is trusted as fetched, else each. */
    long checkedAfterFill() {
        return CorruptBlocks.checksOfBlocksJustFetched(tmp, BLOCKS);
    }

    @Test
    void defaultIsOnLoad() {
        assertThat(cache.config().verify()).isEqualTo(VerifyMode.ON_LOAD);
    }

    @Test
    void hitsOfUnchangedResidentBlocks_areNotReadAgain() throws Exception {
        cachedAndChecked();
        for (int i = 0; i < 3; i++) {
            assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
            assertThat(cache.readBytes(key, ByteRange.of(5 * BLOCK + 100, 3000))).isEqualTo(Arrays.copyOfRange(bytes, 5 * BLOCK + 100, 5 * BLOCK + 3100));
            try (ObjectContent r = cache.get(GetRequest.whole(key).reaching(GetRequest.Reach.CACHED_NOW))) {
                assertThat(r).as("trusted blocks go out with sendfile, from the event loop").isNotNull();
                assertThat(r.readAllBytes()).isEqualTo(bytes);
            }
        }
        assertThat(cache.stats().verifiedBlocks()).isEqualTo(checkedAfterFill());
        assertThat(tracking.count(Op.GET)).isZero();
    }

    @Test
    void get_afterEveryBlockCorruptedWhileRunning_servesTheRightBytes_fetchedAgain() throws Exception {
        cachedAndChecked();
        assertThat(CorruptBlocks.flip16InEach(tmp.resolve("cache"))).isEqualTo(BLOCKS);
        CorruptBlocks.dropPageCache();

        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(cache.stats().evictedCorrupt()).isEqualTo(BLOCKS);
        assertThat(tracking.count(Op.GET)).as("each block fetched again when the reader finds it bad").isEqualTo(BLOCKS);

        tracking.reset();
        assertThat(cache.readBytes(key, null)).as("the refetched blocks are sound").isEqualTo(bytes);
        assertThat(tracking.count(Op.GET)).isZero();
    }

    @Test
    void rangedGet_afterCorruption_servesTheRightBytes_andDropsOnlyTheBlocksItRead() throws Exception {
        cachedAndChecked();
        CorruptBlocks.flip16InEach(tmp.resolve("cache"));
        CorruptBlocks.dropPageCache();

        int from = 3 * BLOCK + BLOCK / 2 - 100; // the flipped bytes of block 3 and 4 both fall in it
        assertThat(cache.readBytes(key, ByteRange.of(from, BLOCK))).isEqualTo(Arrays.copyOfRange(bytes, from, from + BLOCK));
        assertThat(cache.stats().evictedCorrupt()).isEqualTo(2);
        assertThat(cache.readBytes(key, ByteRange.of(10, 20))).isEqualTo(Arrays.copyOfRange(bytes, 10, 30));
        assertThat(cache.stats().evictedCorrupt()).as("a range outside the flipped bytes still checks its block").isEqualTo(3);
    }

    @Test
    void cachedOnlyRead_afterCorruption_isNull_andDropsTheBlock_thenGetFetchesItAgain() throws Exception {
        cachedAndChecked();
        GetRequest now = GetRequest.whole(key).reaching(GetRequest.Reach.CACHED_NOW);
        GetRequest checking = GetRequest.whole(key).reaching(GetRequest.Reach.CACHED);
        try (ObjectContent r = cache.get(now)) {
            assertThat(r).isNotNull();
        }
        CorruptBlocks.flip16InEach(tmp.resolve("cache"));
        CorruptBlocks.dropPageCache();

        assertThat(cache.get(now)).as("on an event loop: untrusted blocks are not read there").isNull();
        assertThat(cache.stats().evictedCorrupt()).isZero();
        assertThat(cache.get(checking)).as("checked where it may block: the first bad block makes it null").isNull();
        assertThat(cache.stats().evictedCorrupt()).isEqualTo(1);

        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(cache.stats().evictedCorrupt()).isEqualTo(BLOCKS);
        CorruptBlocks.waitToSettle();
        try (ObjectContent r = cache.get(checking)) {
            assertThat(r).as("the refetched blocks, checked, go out with sendfile again").isNotNull();
            FileRegionReadable regions = (FileRegionReadable) r.stream();
            int count = 0;
            for (FileRegionReadable.Region region; (region = regions.nextRegion(Integer.MAX_VALUE)) != null; count++) {
                region.release();
            }
            assertThat(count).isEqualTo(BLOCKS);
        }
    }

    @Test
    void blockWrittenAMomentAgo_flippedAtOnce_isStillCaught() throws Exception {
        // no settling: the flip may land in the same clock tick as the write, leaving the ctime as it was
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        CorruptBlocks.flip16InEach(tmp.resolve("cache"));
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(cache.stats().evictedCorrupt()).isEqualTo(BLOCKS);
    }

    @Test
    void aHitThatNeedsACheck_isStillReadFromTheBlockFile_notHeldInMemory() throws Exception {
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        CorruptBlocks.waitToSettle();
        for (Path f : CorruptBlocks.blockFiles(tmp.resolve("cache"))) {
            Files.setLastModifiedTime(f, FileTime.fromMillis(0)); // a new ctime, the same bytes: checked at the next use
        }
        try (ObjectContent c = cache.get(new GetRequest(key, ByteRange.of(100, 3000), null))) {
            FileRegionReadable.Region r = ((FileRegionReadable) c.stream()).nextRegion(1 << 20);
            assertThat(r).as("checked, then sent from its file: a reader that stalls holds none of it").isNotNull();
            r.release();
        }
        assertThat(cache.stats().verifiedBlocks()).isEqualTo(1);
    }

    @Test
    void aReaderThatComesBackAfterItsRunLetTheBlocksGo_findsThemChangedAndChecked() throws Exception {
        int run = cache.config().maxRunBlocks(); // the reader's first run: blocks 0 to 15 of 17
        try (ObjectContent c = cache.get(new GetRequest(key, null, null))) {
            InputStream in = c.stream();
            byte[] first = new byte[BLOCK];
            assertThat(in.readNBytes(first, 0, BLOCK)).isEqualTo(BLOCK); // and no further: block 1 is not looked at yet
            assertThat(first).isEqualTo(Arrays.copyOf(bytes, BLOCK));
            // the run fetches on while its reader stops
            Await.until("the run's blocks in place", Duration.ofSeconds(30), () -> cache.stats().residentBlocks() >= run);
            CorruptBlocks.waitToSettle();
            assertThat(CorruptBlocks.flip16InEach(tmp.resolve("cache"))).isEqualTo(run);
            assertThat(in.readAllBytes()).isEqualTo(Arrays.copyOfRange(bytes, BLOCK, bytes.length));
        }
        assertThat(cache.stats().evictedCorrupt()).as("the run's blocks after the first, read back from disk").isEqualTo(run - 1);
        assertThat(tracking.count(Op.GET)).as("the run, then each bad block again (the last with block 16)").isEqualTo(run);
    }

    @Test
    void pagesDroppedFromThePageCache_meanACheckBeforeTheNextUse() throws Exception {
        cachedAndChecked();
        Assumptions.assumeTrue(CorruptBlocks.dropPageCache(), "needs root to drop the page cache");
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(cache.stats().verifiedBlocks()).as("every block read back from the device and checked").isEqualTo(checkedAfterFill() + BLOCKS);
        assertThat(cache.stats().evictedCorrupt()).isZero();
        assertThat(tracking.count(Op.GET)).isZero();
    }
}
