package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.ByteRange;
import dev.ferry.store.FileRegionReadable;
import dev.ferry.store.GetRequest;
import dev.ferry.store.LatencyStore;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.TrackingStore.Op;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CachingStoreTest {
    static final int BLOCK = 64 * 1024;

    @TempDir
    Path tmp;
    FileObjectStore origin;
    TrackingStore tracking;
    CachingStore cache;
    ObjectKey key = ObjectKey.of("data", "train/shard-0.tar");
    byte[] bytes;

    @BeforeEach
    void setUp() throws IOException {
        origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        bytes = random(16 * BLOCK + 1234, 1);
        origin.put(key, PutBody.ofBytes(bytes));
        tracking = new TrackingStore(origin);
        cache = open(config());
    }

    @AfterEach
    void tearDown() throws IOException {
        cache.close();
    }

    CacheConfig config() {
        return CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK);
    }

    CachingStore open(CacheConfig config) {
        return new CachingStore(tracking, config);
    }

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    List<ByteRange> getRanges() {
        return tracking.calls().stream().filter(c -> c.op() == Op.GET).map(TrackingStore.Call::range).toList();
    }

    @Test
    void get_miss_thenHit_servesFromDiskWithoutUpstreamGets() throws IOException {
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(tracking.count(Op.GET)).isEqualTo(2); // 17 blocks: a run of 16, then 1
        tracking.reset();
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(tracking.count(Op.GET)).isZero();
        CacheStats s = cache.stats();
        assertThat(s.misses()).isEqualTo(17);
        assertThat(s.hits()).isEqualTo(17);
        assertThat(s.residentBlocks()).isEqualTo(17);
        assertThat(s.residentBytes()).isEqualTo(bytes.length);
        assertThat(s.bytesFromUpstream()).isEqualTo(bytes.length);
        assertThat(s.bytesFromCache()).isEqualTo(bytes.length);
    }

    @Test
    void capacityLentAway_evictsBlocksDownToTheRest_andTheBlocksNeverHoldMoreThanIt() throws IOException {
        TierContents contents = cache.contents();
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(cache.stats().residentBytes()).isEqualTo(bytes.length); // 17 blocks of a 64-block tier
        assertThat(contents.lend(56L * BLOCK)).isEqualTo(56L * BLOCK);
        assertThat(cache.stats().residentBytes()).as("8 blocks left, evicted to the low watermark").isLessThanOrEqualTo(8L * BLOCK);
        tracking.reset();
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes); // read again: what did not fit is fetched, never held beyond 8 blocks
        assertThat(tracking.count(Op.GET)).isPositive();
        assertThat(cache.stats().residentBytes()).isLessThanOrEqualTo(8L * BLOCK);
        assertThat(contents.lend(0)).isZero(); // given back: the whole tier again
        cache.readBytes(key, null);
        cache.readBytes(key, null);
        assertThat(cache.stats().residentBytes()).isEqualTo(bytes.length);
        assertThat(contents.lend(1L << 40)).as("at most the capacity").isEqualTo(64L * BLOCK);
        assertThat(cache.stats().residentBytes()).isZero();
    }

    @Test
    void aVersionToldOnlyIfUnknown_isHeldWhenNothingIs_andNeverReplacesWhatIs_howeverOld() throws IOException {
        cache.close();
        cache = open(config().withMetadataTtl(Duration.ZERO)); // what is held is never fresh: listed() would replace it
        ObjectMeta current = origin.head(key);
        ObjectMeta older = new ObjectMeta(key, current.size(), "\"an-older-etag\"", null, current.lastModified().minusSeconds(60));
        cache.listedIfUnknown(current);
        assertThat(cache.knownMeta(key, current.etag())).as("nothing was held: now the told version is").isEqualTo(current);
        cache.listedIfUnknown(older);
        assertThat(cache.knownMeta(key, older.etag())).as("an older version told later").isNull();
        assertThat(cache.knownMeta(key, current.etag())).isEqualTo(current);
        assertThat(readAt(current)).isEqualTo(Arrays.copyOf(bytes, 1000));
        assertThat(tracking.count(Op.HEAD)).as("a read naming the held version").isZero();
    }

    /** The first 1,000 bytes of {@code version}, read as a mount's read names it (If-Match). */
    byte[] readAt(ObjectMeta version) throws IOException {
        try (ObjectContent c = cache.get(new GetRequest(key, ByteRange.of(0, 1000), version.etag()))) {
            return c.stream().readAllBytes();
        }
    }

    @Test
    void rangeRead_fetchesOnlyMissingBlocks_coalescingAdjacentMisses() throws IOException {
        byte[] middle = cache.readBytes(key, ByteRange.of(2L * BLOCK + 10, 2L * BLOCK));
        assertThat(middle).isEqualTo(Arrays.copyOfRange(bytes, 2 * BLOCK + 10, 4 * BLOCK + 10));
        // blocks 2, 3 and 4 (the range ends 10 bytes into block 4): one aligned GET
        assertThat(getRanges()).containsExactly(ByteRange.of(2L * BLOCK, 3L * BLOCK));
        tracking.reset();
        assertThat(cache.readBytes(key, ByteRange.of(0, 8L * BLOCK))).isEqualTo(Arrays.copyOf(bytes, 8 * BLOCK));
        // blocks 0-1 missing, 2-4 cached, 5-7 missing: two GETs
        assertThat(getRanges()).containsExactly(ByteRange.of(0, 2L * BLOCK), ByteRange.of(5L * BLOCK, 3L * BLOCK));
    }

    @Test
    void unalignedTinyRead_andTail_areExact() throws IOException {
        assertThat(cache.readBytes(key, ByteRange.of(16L * BLOCK + 1000, 1000))).isEqualTo(
                Arrays.copyOfRange(bytes, 16 * BLOCK + 1000, bytes.length));
        assertThat(cache.readBytes(key, ByteRange.of(BLOCK - 1, 2))).isEqualTo(Arrays.copyOfRange(bytes, BLOCK - 1, BLOCK + 1));
        assertThatThrownBy(() -> cache.readBytes(key, ByteRange.of(bytes.length, 1)))
                .isInstanceOf(StoreException.class).hasMessageContaining("starts past the end");
    }

    @Test
    void singleFlight_concurrentReadersOfMissingBlocks_fetchEachOnce() throws Exception {
        cache.close();
        tracking = new TrackingStore(new LatencyStore(origin, 100));
        cache = open(config());
        int readers = 8;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(readers);
        try {
            List<Future<byte[]>> reads = new ArrayList<>();
            for (int i = 0; i < readers; i++) {
                reads.add(pool.submit(() -> {
                    start.await();
                    return cache.readBytes(key, ByteRange.of(0, 4L * BLOCK));
                }));
            }
            start.countDown();
            for (Future<byte[]> f : reads) {
                assertThat(f.get()).isEqualTo(Arrays.copyOf(bytes, 4 * BLOCK));
            }
        } finally {
            pool.shutdown();
        }
        assertThat(tracking.count(Op.GET)).isEqualTo(1);
        assertThat(cache.stats().misses()).isEqualTo(4);
    }

    @Test
    void get_afterEtagChange_refetches_andDropsTheOldVersion() throws IOException {
        cache.close();
        cache = open(config().withMetadataTtl(Duration.ZERO));
        ObjectMeta v1 = cache.head(key);
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        byte[] v2bytes = random(3 * BLOCK, 2);
        origin.put(key, PutBody.ofBytes(v2bytes));
        try (ObjectContent c = cache.get(GetRequest.whole(key))) {
            assertThat(c.meta().etag()).isNotEqualTo(v1.etag());
            assertThat(c.stream().readAllBytes()).isEqualTo(v2bytes);
        }
        CacheStats s = cache.stats();
        assertThat(s.evictedStale()).isEqualTo(17);
        assertThat(s.residentBlocks()).isEqualTo(3);
        // asking for the old version by ETag now fails rather than serving it
        assertThatThrownBy(() -> cache.get(new GetRequest(key, null, v1.etag())))
                .isInstanceOf(StoreException.class)
                .satisfies(e -> assertThat(((StoreException) e).kind()).isEqualTo(StoreException.Kind.PRECONDITION_FAILED));
    }

    @Test
    void pinnedVersion_staysReadableAfterAReplacement_untilUnpinned() throws IOException {
        cache.close();
        cache = open(config().withMetadataTtl(Duration.ZERO));
        ObjectMeta v1 = cache.head(key);
        VersionPin pin = cache.pinVersion(v1);
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes); // 17 blocks of v1 resident
        byte[] v2bytes = random(3 * BLOCK, 2);
        origin.put(key, PutBody.ofBytes(v2bytes));
        assertThat(cache.readBytes(key, null)).isEqualTo(v2bytes); // a HEAD sees v2
        assertThat(cache.stats().evictedStale()).as("v1 is pinned: its blocks stay").isZero();
        tracking.reset();
        try (ObjectContent c = cache.get(new GetRequest(key, null, v1.etag()))) {
            assertThat(c.stream().readAllBytes()).isEqualTo(bytes);
        }
        assertThat(tracking.total()).as("the pinned version is served from local disk alone").isZero();
        pin.close();
        assertThat(cache.stats().evictedStale()).as("the last pin of a superseded version drops it").isEqualTo(17);
        assertThat(cache.stats().residentBlocks()).isEqualTo(3);
        assertThatThrownBy(() -> cache.get(new GetRequest(key, null, v1.etag())))
                .isInstanceOf(StoreException.class)
                .satisfies(e -> assertThat(((StoreException) e).kind()).isEqualTo(StoreException.Kind.PRECONDITION_FAILED));
    }

    @Test
    void pinnedVersion_staysReadableAfterADelete_untilUnpinned() throws IOException {
        cache.close();
        cache = open(config().withMetadataTtl(Duration.ZERO));
        ObjectMeta v1 = cache.head(key);
        try (VersionPin pin = cache.pinVersion(v1)) {
            cache.readBytes(key, null);
            origin.delete(key);
            assertThatThrownBy(() -> cache.head(key)).isInstanceOf(ObjectNotFoundException.class);
            try (ObjectContent c = cache.get(new GetRequest(key, ByteRange.of(BLOCK, 100), v1.etag()))) {
                assertThat(c.stream().readAllBytes()).isEqualTo(java.util.Arrays.copyOfRange(bytes, BLOCK, BLOCK + 100));
            }
        }
        assertThat(cache.stats().residentBlocks()).as("dropped at the last unpin").isZero();
    }

    @Test
    void supersededPinnedVersion_isNoVictim_butACurrentPinnedOneIs() throws IOException {
        cache.close();
        cache = open(config().withMetadataTtl(Duration.ZERO).withWatermarks(0.9, 0.75)); // 64 blocks
        ObjectKey other = ObjectKey.of("data", "other");
        origin.put(other, PutBody.ofBytes(random(16 * BLOCK, 4)));
        ObjectMeta v1 = cache.head(key);
        VersionPin superseded = cache.pinVersion(v1);
        VersionPin current = cache.pinVersion(cache.head(other));
        cache.readBytes(key, null);
        cache.readBytes(other, null);
        origin.put(key, PutBody.ofBytes(random(BLOCK, 2)));
        cache.head(key); // v1 superseded, still pinned
        for (int i = 0; i < 8; i++) { // 8 x 16 blocks through a 64-block cache
            ObjectKey k = ObjectKey.of("data", "churn/" + i);
            origin.put(k, PutBody.ofBytes(random(16 * BLOCK, 20 + i)));
            cache.readBytes(k, null);
        }
        assertThat(cache.stats().evictedCapacity()).isPositive();
        try (ObjectContent c = cache.get(new GetRequest(key, null, v1.etag()))) {
            assertThat(c.stream().readAllBytes()).as("every block of the superseded pinned version survived").isEqualTo(bytes);
        }
        tracking.reset();
        cache.readBytes(other, null);
        assertThat(tracking.count(Op.GET)).as("the current pinned version was evicted and fetched again").isPositive();
        superseded.close();
        current.close();
    }

    @Test
    void readNamingItsVersion_needsNoHead_whenTheCacheKnowsIt() throws IOException {
        ObjectMeta meta = cache.head(key);
        cache.readBytes(key, null);
        tracking.reset();
        try (ObjectContent c = cache.get(new GetRequest(key, ByteRange.of(0, 100), meta.etag()))) {
            c.stream().readAllBytes();
        }
        assertThat(tracking.total()).isZero();
    }

    @Test
    void missingObject_isNotFound_andDropsItsBlocks() throws IOException {
        cache.close();
        cache = open(config().withMetadataTtl(Duration.ZERO));
        cache.readBytes(key, null);
        origin.delete(key);
        assertThatThrownBy(() -> cache.readBytes(key, null)).isInstanceOf(ObjectNotFoundException.class);
        assertThat(cache.stats().residentBlocks()).isZero();
    }

    @Test
    void capacity_isNeverExceeded_andEvictionsAreCounted() throws IOException {
        cache.close();
        cache = open(config().withWatermarks(0.9, 0.75)); // 64 blocks
        for (int i = 0; i < 8; i++) {
            ObjectKey k = ObjectKey.of("data", "many/" + i);
            byte[] b = random(16 * BLOCK, 10 + i);
            origin.put(k, PutBody.ofBytes(b));
            assertThat(cache.readBytes(k, null)).isEqualTo(b);
            assertThat(cache.stats().residentBytes()).isLessThanOrEqualTo(64L * BLOCK);
        }
        CacheStats s = cache.stats();
        assertThat(s.evictedCapacity()).isPositive();
        assertThat(s.residentBytes()).isLessThanOrEqualTo((long) (0.9 * 64 * BLOCK));
        try (Stream<Path> files = Files.walk(tmp.resolve("cache/blocks"))) {
            assertThat(files.filter(Files::isRegularFile).count()).isEqualTo(s.residentBlocks());
        }
    }

    @Test
    void eviction_neverRemovesABlockBeingRead() throws IOException {
        cache.close();
        cache = open(config().withWatermarks(1.0, 1.0).withMaxRunBlocks(1));
        ObjectKey small = ObjectKey.of("data", "small/0");
        byte[] smallBytes = random(2 * BLOCK, 3);
        origin.put(small, PutBody.ofBytes(smallBytes));
        cache.readBytes(small, null); // cached
        try (ObjectContent c = cache.get(GetRequest.whole(small))) {
            InputStream in = c.stream();
            byte[] first = in.readNBytes(100); // block 0 is now pinned by this reader
            for (int i = 0; i < 6; i++) { // 6 x 16 blocks through a 64-block cache
                ObjectKey k = ObjectKey.of("data", "churn/" + i);
                origin.put(k, PutBody.ofBytes(random(16 * BLOCK, 20 + i)));
                cache.readBytes(k, null);
            }
            byte[] rest = in.readAllBytes();
            byte[] all = new byte[first.length + rest.length];
            System.arraycopy(first, 0, all, 0, first.length);
            System.arraycopy(rest, 0, all, first.length, rest.length);
            assertThat(all).isEqualTo(smallBytes);
        }
        assertThat(cache.stats().evictedCapacity()).isPositive();
    }

    @Test
    void pinPolicy_fillsThenBypasses() throws IOException {
        cache.close();
        cache = open(config().withPolicy("pin"));
        for (int i = 0; i < 6; i++) {
            ObjectKey k = ObjectKey.of("data", "pin/" + i);
            origin.put(k, PutBody.ofBytes(random(16 * BLOCK, 30 + i)));
            cache.readBytes(k, null);
        }
        CacheStats s = cache.stats();
        assertThat(s.evictedCapacity()).isZero();
        assertThat(s.bypassed()).isPositive();
        assertThat(s.residentBytes()).isLessThanOrEqualTo((long) (0.95 * 64 * BLOCK));
    }

    @Test
    void refusedBlock_isFetchedOnlyForTheBytesWanted() throws IOException {
        cache.close();
        cache = open(config().withPolicy("pin"));
        for (int i = 0; i < 4; i++) { // fill the pin cache
            ObjectKey k = ObjectKey.of("data", "fill/" + i);
            origin.put(k, PutBody.ofBytes(random(16 * BLOCK, 40 + i)));
            cache.readBytes(k, null);
        }
        tracking.reset();
        assertThat(cache.readBytes(key, ByteRange.of(BLOCK + 100, 300))).isEqualTo(Arrays.copyOfRange(bytes, BLOCK + 100, BLOCK + 400));
        // the miss is one request, for the block the bytes lie in, with no HEAD before it: the policy's refusal comes
        // with its answer, and only the bytes wanted are read of it
        assertThat(getRanges()).containsExactly(ByteRange.of(BLOCK, BLOCK));
        assertThat(tracking.count(Op.HEAD)).isZero();
        assertThat(cache.stats().bytesFromUpstream()).isEqualTo(64L * BLOCK + 300);
        tracking.reset();
        // the version known, a refused block is fetched for the bytes wanted only
        assertThat(cache.readBytes(key, ByteRange.of(3L * BLOCK + 5, 100))).isEqualTo(Arrays.copyOfRange(bytes, 3 * BLOCK + 5, 3 * BLOCK + 105));
        assertThat(getRanges()).containsExactly(ByteRange.of(3L * BLOCK + 5, 100));
        assertThat(tracking.count(Op.HEAD)).isZero();
    }

    @Test
    void refusedBlock_isHeldInAnUnnamedTemporaryFile_notInMemory() throws IOException {
        cache.close();
        cache = open(config().withPolicy("pin"));
        for (int i = 0; i < 4; i++) { // fill the pin cache
            ObjectKey k = ObjectKey.of("data", "fill/" + i);
            origin.put(k, PutBody.ofBytes(random(16 * BLOCK, 40 + i)));
            cache.readBytes(k, null);
        }
        try (ObjectContent c = cache.get(new GetRequest(key, ByteRange.of(BLOCK + 100, 3000), null))) {
            FileRegionReadable.Region r = ((FileRegionReadable) c.stream()).nextRegion(1 << 20);
            assertThat(r).as("a region of a file, not bytes in memory").isNotNull();
            try {
                assertThat(r.length()).isEqualTo(3000);
                ByteBuffer got = ByteBuffer.allocate(3000);
                while (got.hasRemaining()) {
                    r.channel().read(got, r.position() + got.position());
                }
                assertThat(got.array()).isEqualTo(Arrays.copyOfRange(bytes, BLOCK + 100, BLOCK + 3100));
                try (Stream<Path> left = Files.list(tmp.resolve("cache").resolve(CacheLayout.TMP))) {
                    assertThat(left.toList()).as("the temporary file has no name: nothing to leave behind").isEmpty();
                }
            } finally {
                r.release();
            }
            assertThat(c.stream().read()).isEqualTo(-1);
        }
        assertThat(cache.stats().bypassed()).isPositive();
    }

    @Test
    void cleanRestart_isWarm() throws IOException {
        cache.readBytes(key, null);
        cache.close();
        assertThat(tmp.resolve("cache/" + CacheLayout.SNAPSHOT)).exists();
        tracking.reset();
        cache = open(config());
        assertThat(tmp.resolve("cache/" + CacheLayout.SNAPSHOT)).doesNotExist(); // a crash from now on means a scan
        assertThat(cache.stats().residentBlocks()).isEqualTo(17);
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(tracking.count(Op.GET)).isZero();
        assertThat(tracking.count(Op.HEAD)).isEqualTo(1);
    }

    @Test
    void restartAfterCrash_rebuildsTheIndexFromBlockFiles() throws IOException {
        cache.readBytes(key, null);
        cache.abandonWithoutSnapshot();
        Files.writeString(tmp.resolve("cache/tmp/half-written.tmp"), "torn");
        Path garbage = tmp.resolve("cache/blocks/00/00/garbage.blk");
        Files.createDirectories(garbage.getParent());
        Files.writeString(garbage, "not a block");
        tracking.reset();
        cache = open(config());
        assertThat(tmp.resolve("cache/tmp/half-written.tmp")).doesNotExist();
        assertThat(garbage).doesNotExist();
        assertThat(cache.stats().residentBlocks()).isEqualTo(17);
        assertThat(cache.stats().evictedCorrupt()).isEqualTo(1);
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(tracking.count(Op.GET)).isZero();
    }

    @Test
    void corruptBlock_isDetectedOnFirstRead_droppedAndFetchedAgain() throws IOException {
        cache.readBytes(key, null);
        cache.close();
        Path victim;
        try (Stream<Path> files = Files.walk(tmp.resolve("cache/blocks"))) {
            victim = files.filter(p -> p.toString().endsWith(".blk")).findFirst().orElseThrow();
        }
        flipLastByte(victim);
        tracking.reset();
        cache = open(config());
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(cache.stats().evictedCorrupt()).isEqualTo(1);
        assertThat(tracking.count(Op.GET)).isEqualTo(1);
        tracking.reset();
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(tracking.count(Op.GET)).isZero();
    }

    @Test
    void verifyAlways_catchesCorruptionWhileRunning() throws IOException {
        cache.close();
        cache = open(config().withVerify(VerifyMode.ALWAYS));
        cache.readBytes(key, ByteRange.of(0, BLOCK));
        try (Stream<Path> files = Files.walk(tmp.resolve("cache/blocks"))) {
            flipLastByte(files.filter(p -> p.toString().endsWith(".blk")).findFirst().orElseThrow());
        }
        assertThat(cache.readBytes(key, ByteRange.of(0, BLOCK))).isEqualTo(Arrays.copyOf(bytes, BLOCK));
        assertThat(cache.stats().evictedCorrupt()).isEqualTo(1);
    }

    static void flipLastByte(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, ch.size() - 1);
            one.put(0, (byte) (one.get(0) ^ 0x5a));
            one.rewind();
            ch.write(one, ch.size() - 1);
        }
    }

    @Test
    void unusableCacheDir_servesAsPassThrough() throws IOException {
        cache.close();
        Path notADir = Files.writeString(tmp.resolve("file-not-dir"), "x");
        cache = open(CacheConfig.of(notADir, 1 << 20).withBlockSize(BLOCK));
        assertThat(cache.isPassThrough()).isTrue();
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(cache.stats().passThrough()).isTrue();
    }

    @Test
    void secondCacheOnTheSameDir_isPassThrough_notShared() throws IOException {
        try (CachingStore second = open(config())) {
            assertThat(second.isPassThrough()).isTrue();
            assertThat(second.readBytes(key, ByteRange.of(0, 10))).isEqualTo(Arrays.copyOf(bytes, 10));
        }
        assertThat(cache.isPassThrough()).isFalse();
    }

    @Test
    void writeThrough_invalidatesCachedBlocks() throws IOException {
        cache.readBytes(key, null);
        byte[] v2 = random(100, 9);
        cache.put(key, PutBody.ofBytes(v2));
        assertThat(cache.readBytes(key, null)).isEqualTo(v2);
        assertThat(cache.stats().residentBlocks()).isEqualTo(1);
        cache.delete(key);
        assertThat(cache.stats().residentBlocks()).isZero();
    }

    @Test
    void emptyObject_readsEmpty() throws IOException {
        ObjectKey empty = ObjectKey.of("data", "empty");
        origin.put(empty, PutBody.ofBytes(new byte[0]));
        try (ObjectContent c = cache.get(GetRequest.whole(empty))) {
            assertThat(c.meta().size()).isZero();
            assertThat(c.meta().etag()).isEqualTo(origin.head(empty).etag());
            assertThat(c.stream().readAllBytes()).isEmpty();
        }
        assertThatThrownBy(() -> cache.readBytes(empty, ByteRange.of(0, 10))).isInstanceOf(StoreException.class)
                .hasMessageContaining("starts past the end");
    }

    @Test
    void coldGet_isOneGet_withNoHead_andTheAnswerIsTheMetadata() throws IOException {
        ObjectKey small = ObjectKey.of("data", "img/0001.jpg");
        byte[] image = random(20_000, 7);
        ObjectMeta put = origin.put(small, PutBody.ofBytes(image).withAttributes(
                new ObjectAttributes(java.util.Map.of("content-type", "image/jpeg", "x-amz-meta-label", "cat"))));
        tracking.reset();
        try (ObjectContent c = cache.get(GetRequest.whole(small))) {
            assertThat(c.stream().readAllBytes()).isEqualTo(image);
            assertThat(c.meta().size()).isEqualTo(image.length);
            assertThat(c.meta().etag()).isEqualTo(put.etag());
            assertThat(c.meta().attributes().headers()).containsEntry("content-type", "image/jpeg").containsEntry("x-amz-meta-label", "cat");
        }
        assertThat(tracking.count(Op.HEAD)).isZero();
        assertThat(getRanges()).containsExactly(ByteRange.of(0, (long) cache.config().maxRunBlocks() * BLOCK));
        tracking.reset();
        // the answer became the metadata: a HEAD and a read within the TTL ask nothing
        assertThat(cache.head(small).etag()).isEqualTo(put.etag());
        assertThat(cache.readBytes(small, null)).isEqualTo(image);
        assertThat(tracking.total()).isZero();
    }

    @Test
    void coldRangedGet_startsItsRunAtTheBlockTheRangeStartsIn() throws IOException {
        assertThat(cache.readBytes(key, ByteRange.of(3L * BLOCK + 7, 10))).isEqualTo(Arrays.copyOfRange(bytes, 3 * BLOCK + 7, 3 * BLOCK + 17));
        assertThat(getRanges()).containsExactly(ByteRange.of(3L * BLOCK, BLOCK));
        assertThat(tracking.count(Op.HEAD)).isZero();
        assertThatThrownBy(() -> cache.readBytes(key, ByteRange.of(40L * BLOCK, 10))).isInstanceOf(StoreException.class)
                .hasMessageContaining("starts past the end");
    }

    @Test
    void coldPrefetch_andColdRead_pinnedToAVersion_areOneGetEach_withNoHead() throws IOException {
        String etag = origin.head(key).etag();
        tracking.reset();
        assertThat(cache.prefetch(new GetRequest(key, ByteRange.of(0, 2L * BLOCK), etag))).isEqualTo(2L * BLOCK);
        assertThat(tracking.count(Op.HEAD)).isZero();
        assertThat(getRanges()).containsExactly(ByteRange.of(0, 2L * BLOCK));
        assertThat(cache.stats().prefetchedBlocks()).isEqualTo(2);

        ObjectKey other = ObjectKey.of("data", "other.bin");
        byte[] otherBytes = random(3 * BLOCK, 3);
        String otherEtag = origin.put(other, PutBody.ofBytes(otherBytes)).etag();
        tracking.reset();
        try (ObjectContent c = cache.get(new GetRequest(other, null, otherEtag))) {
            assertThat(c.stream().readAllBytes()).isEqualTo(otherBytes);
        }
        assertThat(tracking.count(Op.HEAD)).isZero();
        assertThat(tracking.count(Op.GET)).isEqualTo(1);

        ObjectKey third = ObjectKey.of("data", "third.bin");
        origin.put(third, PutBody.ofBytes(random(100, 4)));
        assertThatThrownBy(() -> cache.get(new GetRequest(third, null, "not-its-etag"))).isInstanceOfSatisfying(StoreException.class,
                e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.PRECONDITION_FAILED));
    }

    @Test
    void coldGet_ofAMissingObject_isNotFound_afterOneGet() throws IOException {
        tracking.reset();
        assertThatThrownBy(() -> cache.readBytes(ObjectKey.of("data", "no/such"), null)).isInstanceOf(ObjectNotFoundException.class);
        assertThat(tracking.count(Op.GET)).isEqualTo(1);
        assertThat(tracking.count(Op.HEAD)).isZero();
    }

    @Test
    void closingAStreamEarly_letsOthersFetchWhatItClaimed() throws IOException {
        try (ObjectContent c = cache.get(GetRequest.whole(key))) {
            c.stream().readNBytes(10); // claims a run of 16 blocks, reads only part of the first
        }
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
    }
}
