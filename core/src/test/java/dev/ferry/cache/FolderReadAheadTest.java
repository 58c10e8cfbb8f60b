package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ByteRange;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.TrackingStore.Op;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A folder of small objects read in an order ferry is not told: once readers have missed a few of them, the rest is
 * fetched ahead, each object once, over a real folder store, counted in upstream requests (a tracking store), never
 * timed; the executor runs the read-ahead on the reading thread. Also what must not set it off: a reader of a few
 * objects of a large folder, objects larger than a block, and the bound of a quarter of the tier.
 */
class FolderReadAheadTest {
    static final int BLOCK = 64 * 1024;

    @TempDir
    Path tmp;
    FileObjectStore origin;
    TrackingStore tracking;
    CachingStore cache;
    SequentialReadAhead ahead;
    final Map<ObjectKey, byte[]> written = new HashMap<>();

    void start(long capacity) throws IOException {
        origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        tracking = new TrackingStore(origin);
        cache = new CachingStore(tracking, CacheConfig.of(tmp.resolve("cache"), capacity).withBlockSize(BLOCK));
        ahead = SequentialReadAhead.attach(cache, new SequentialReadAhead.Config(2, 16, 4, 1L << 30, 16, 0, true), Runnable::run);
    }

    @AfterEach
    void tearDown() throws IOException {
        if (cache != null) {
            cache.close();
        }
    }

    List<ObjectKey> folder(String prefix, int objects, int size) throws IOException {
        Random random = new Random(prefix.hashCode());
        List<ObjectKey> keys = new ArrayList<>();
        for (int i = 0; i < objects; i++) {
            ObjectKey key = ObjectKey.of("data", String.format("%s%04d.jpg", prefix, i));
            byte[] bytes = new byte[size];
            random.nextBytes(bytes);
            origin.put(key, PutBody.ofBytes(bytes));
            written.put(key, bytes);
            keys.add(key);
        }
        return keys;
    }

    void read(ObjectKey key) throws IOException {
        byte[] bytes = written.get(key);
        assertThat(cache.readBytes(key, ByteRange.of(0, bytes.length))).as(key.key()).isEqualTo(bytes);
    }

    long requests(Op op) {
        return tracking.calls().stream().filter(c -> c.op() == op).count();
    }

    @Test
    void aShuffledEpochOverAFolderOfSmallObjects_missesAFew_andFindsTheRestFetchedAhead_eachOnce() throws IOException {
        start(64L << 20);
        List<ObjectKey> keys = folder("train/cats/", 100, 20_000);
        folder("train/dogs/", 3, 20_000); // a folder beside it: not listed, not read ahead
        Collections.shuffle(keys, new Random(7));
        for (ObjectKey key : keys) {
            read(key);
        }
        // 4 misses, then a LIST of the folder and the other 96 fetched ahead, each once
        assertThat(requests(Op.LIST)).isEqualTo(1);
        assertThat(requests(Op.GET)).as("each object once").isEqualTo(100);
        assertThat(requests(Op.HEAD)).isZero();
        assertThat(cache.stats().misses()).isEqualTo(FolderReadAhead.FIRST_MISSES);
        assertThat(ahead.foldersReadAhead()).isEqualTo(1);
        assertThat(ahead.folderObjectsScheduled()).isEqualTo(100 - FolderReadAhead.FIRST_MISSES);

        for (ObjectKey key : keys) { // a second epoch: all there, nothing asked
            read(key);
        }
        assertThat(tracking.calls()).hasSize(1 + 100);
    }

    @Test
    void aReaderOfAFewObjectsOfALargeFolder_costsOneListPage_notTheFolder() throws IOException {
        start(64L << 20);
        List<ObjectKey> keys = folder("big/", 400, 1000); // read ahead only at 400 / 32 = 12 misses
        for (ObjectKey key : keys.subList(0, 11)) {
            read(key);
        }
        assertThat(requests(Op.LIST)).as("listed at the 4th miss").isEqualTo(1);
        assertThat(requests(Op.GET)).as("the reader's own").isEqualTo(11);
        read(keys.get(11));
        assertThat(requests(Op.GET)).as("the 12th miss: the other 388 fetched ahead").isEqualTo(400);
        assertThat(requests(Op.LIST)).isEqualTo(1);
    }

    @Test
    void objectsLargerThanABlock_areLeftToTheSequentialReadAhead() throws IOException {
        start(64L << 20);
        List<ObjectKey> keys = folder("shards/", 10, 2 * BLOCK);
        for (ObjectKey key : keys) {
            read(key);
        }
        assertThat(requests(Op.LIST)).isZero();
        assertThat(ahead.foldersReadAhead()).isZero();
    }

    @Test
    void aFolderLargerThanAQuarterOfTheTier_isFetchedAheadOnlyThatFar() throws IOException {
        long capacity = 4L << 20;
        start(capacity);
        List<ObjectKey> keys = folder("wide/", 200, 32 * 1024); // 6.4 MB: more than the tier
        for (ObjectKey key : keys.subList(0, 8)) {
            read(key);
        }
        long ahead = requests(Op.GET) - 8;
        assertThat(ahead).as("fetched ahead").isPositive().isLessThanOrEqualTo(capacity / 4 / (32 * 1024));
    }
}
