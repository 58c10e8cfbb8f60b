package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.ByteRange;
import dev.ferry.store.FaultyStore;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.TrackingStore.Op;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Await;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fill path: a miss hands the reader bytes as they arrive (before the block is complete), other readers
 * of the block share the one fetch, a reader that stops reading holds back neither, and a fetch that fails or
 * stops leaves no block behind. Time is never
 * measured: a gate holds the upstream's bytes back, and a reader that gets bytes while the gate is shut
 * shows stream-through (a generous timeout only turns a hang into a failure).
 */
class StreamThroughTest {
    static final int BLOCK = 64 * 1024;
    static final int OPEN = 10_000; // bytes the gate lets through before it shuts

    @TempDir
    Path tmp;
    FileObjectStore origin;
    ObjectKey key = ObjectKey.of("data", "big.bin");
    byte[] bytes;
    ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void setUp() throws IOException {
        origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        bytes = new byte[4 * BLOCK + 777];
        new Random(5).nextBytes(bytes);
        origin.put(key, PutBody.ofBytes(bytes));
    }

    @AfterEach
    void tearDown() {
        pool.shutdownNow();
    }

    CacheConfig config() {
        return CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK);
    }

    /** Every GET's body passes {@link #OPEN} bytes, then waits for {@code gate}. */
    static final class GatedStore extends ForwardingObjectStore {
        final CountDownLatch gate = new CountDownLatch(1);

        GatedStore(ObjectStore delegate) {
            super(delegate);
        }

        @Override
        public ObjectContent get(GetRequest request) throws IOException {
            ObjectContent c = delegate.get(request);
            return new ObjectContent(c.meta(), c.range(), new FilterInputStream(c.stream()) {
                long passed;

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (passed >= OPEN) {
                        try {
                            gate.await();
                        } catch (InterruptedException e) {
                            throw new InterruptedIOException();
                        }
                    } else {
                        len = (int) Math.min(len, OPEN - passed);
                    }
                    int n = super.read(b, off, len);
                    passed += Math.max(0, n);
                    return n;
                }
            });
        }
    }

    List<Path> blockFiles() throws IOException {
        try (Stream<Path> walk = Files.walk(tmp.resolve("cache").resolve(CacheLayout.BLOCKS))) {
            return walk.filter(p -> p.toString().endsWith(".blk")).toList();
        }
    }

    @Test
    void miss_handsTheReaderBytesBeforeTheBlockIsComplete_andSharesTheFetch() throws Exception {
        GatedStore gated = new GatedStore(origin);
        TrackingStore tracking = new TrackingStore(gated);
        try (CachingStore cache = new CachingStore(tracking, config())) {
            cache.head(key);
            try (ObjectContent first = cache.get(new GetRequest(key, ByteRange.of(0, BLOCK), null));
                    ObjectContent second = cache.get(new GetRequest(key, ByteRange.of(0, BLOCK), null))) {
                byte[] a = new byte[OPEN];
                byte[] b = new byte[OPEN];
                // both reads return while the gate is shut: the first reader's own fetch, the second sharing it
                Future<Integer> readA = pool.submit(() -> first.stream().readNBytes(a, 0, OPEN));
                assertThat(readA.get(30, TimeUnit.SECONDS)).isEqualTo(OPEN);
                Future<Integer> readB = pool.submit(() -> second.stream().readNBytes(b, 0, OPEN));
                assertThat(readB.get(30, TimeUnit.SECONDS)).isEqualTo(OPEN);
                assertThat(a).isEqualTo(Arrays.copyOf(bytes, OPEN));
                assertThat(b).isEqualTo(Arrays.copyOf(bytes, OPEN));
                assertThat(tracking.count(Op.GET)).as("one fetch for both readers").isEqualTo(1);
                assertThat(blockFiles()).as("no block is in place before all of its bytes came").isEmpty();

                gated.gate.countDown();
                assertThat(first.stream().readAllBytes()).isEqualTo(Arrays.copyOfRange(bytes, OPEN, BLOCK));
                assertThat(second.stream().readAllBytes()).isEqualTo(Arrays.copyOfRange(bytes, OPEN, BLOCK));
            }
            assertThat(tracking.count(Op.GET)).isEqualTo(1);
            assertThat(blockFiles()).hasSize(1);
            tracking.reset();
            assertThat(cache.readBytes(key, ByteRange.of(0, BLOCK))).isEqualTo(Arrays.copyOf(bytes, BLOCK));
            assertThat(tracking.count(Op.GET)).as("the streamed block is kept").isZero();
        }
    }

    @Test
    void aReaderThatStopsReading_holdsBackNeitherTheFetchNorAnotherReaderOfItsBlocks() throws Exception {
        TrackingStore tracking = new TrackingStore(origin);
        try (CachingStore cache = new CachingStore(tracking, config())) {
            try (ObjectContent stalled = cache.get(new GetRequest(key, null, null))) {
                // its run of all five blocks is claimed and under way; it reads no more for now
                assertThat(stalled.stream().readNBytes(100)).isEqualTo(Arrays.copyOf(bytes, 100));
                Future<byte[]> other = pool.submit(() -> cache.readBytes(key, null));
                assertThat(other.get(30, TimeUnit.SECONDS)).isEqualTo(bytes);
                assertThat(tracking.count(Op.GET)).as("the stalled reader's fetch served the other reader").isEqualTo(1);
                assertThat(blockFiles()).as("every block fetched whole and kept while its first reader stalled").hasSize(5);
                assertThat(stalled.stream().readAllBytes()).isEqualTo(Arrays.copyOfRange(bytes, 100, bytes.length));
            }
            assertThat(tracking.count(Op.GET)).isEqualTo(1);
        }
    }

    @Test
    void aReaderThatStalledPastTheFetch_readsOnFromTheBlockFile_checkedFirst() throws Exception {
        GatedStore gated = new GatedStore(origin);
        TrackingStore tracking = new TrackingStore(gated);
        try (CachingStore cache = new CachingStore(tracking, config())) {
            try (ObjectContent stalled = cache.get(new GetRequest(key, ByteRange.of(0, BLOCK), null))) {
                byte[] first = new byte[100];
                assertThat(stalled.stream().readNBytes(first, 0, 100)).isEqualTo(100); // reading the fetch under way
                gated.gate.countDown();
                // the fetch finishes and puts the block in place
                Await.until("block 0 in place", Duration.ofSeconds(30), () -> cache.stats().residentBlocks() >= 1);
                CorruptBlocks.waitToSettle();
                assertThat(CorruptBlocks.flip16InEach(tmp.resolve("cache"))).isEqualTo(1);
                assertThat(stalled.stream().readAllBytes()).as("the bytes as fetched, not as they are on disk now")
                        .isEqualTo(Arrays.copyOfRange(bytes, 100, BLOCK));
            }
            assertThat(cache.stats().evictedCorrupt()).isEqualTo(1);
            assertThat(tracking.count(Op.GET)).as("the block fetched again when its check failed").isEqualTo(2);
        }
    }

    @Test
    void fetchBrokenMidBlock_failsTheRead_andLeavesNoPartialBlock() throws Exception {
        FaultyStore faulty = new FaultyStore(origin);
        TrackingStore tracking = new TrackingStore(faulty);
        try (CachingStore cache = new CachingStore(tracking, config())) {
            faulty.breakStreams(1, BLOCK + 5_000); // block 0 whole, block 1 cut short
            assertThatThrownBy(() -> cache.readBytes(key, null)).isInstanceOf(IOException.class);
            assertThat(blockFiles()).as("only the block that arrived whole").hasSize(1);
            assertThat(Files.list(tmp.resolve("cache").resolve(CacheLayout.TMP)).toList()).as("no temporary left").isEmpty();
            assertThat(cache.stats().writeFailures()).isZero();

            tracking.reset();
            assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
            // block 0 from disk; blocks 1-4 fetched again in one run
            assertThat(tracking.calls().stream().filter(c -> c.op() == Op.GET).map(TrackingStore.Call::range).toList())
                    .containsExactly(ByteRange.of(BLOCK, bytes.length - BLOCK));
            assertThat(cache.stats().evictedCorrupt()).isZero();
        }
        assertThat(CacheVerifier.verify(tmp.resolve("cache")).problems()).isEmpty();
    }

    @Test
    void readerLeavingMidBlock_finishesThatBlock_forItsWaitersAndTheCache() throws Exception {
        GatedStore gated = new GatedStore(origin);
        TrackingStore tracking = new TrackingStore(gated);
        try (CachingStore cache = new CachingStore(tracking, config())) {
            try (ObjectContent c = cache.get(new GetRequest(key, null, null))) {
                assertThat(c.stream().readNBytes(100)).isEqualTo(Arrays.copyOf(bytes, 100));
            } // left while the fetch waits at the gate, inside block 0
            gated.gate.countDown();
            tracking.reset();
            assertThat(cache.readBytes(key, ByteRange.of(0, BLOCK))).isEqualTo(Arrays.copyOf(bytes, BLOCK));
            assertThat(tracking.count(Op.GET)).as("block 0 was completed when its reader left").isZero();
            assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
            assertThat(tracking.count(Op.GET)).as("blocks 1-4 were abandoned, fetched now").isEqualTo(1);
        }
    }

    @Test
    void powerLossOfUnsyncedBlocks_zeroedOrShortFiles_areNeverServed_evenWithVerifyNever() throws Exception {
        CacheConfig never = config().withVerify(VerifyMode.NEVER);
        CachingStore cache = new CachingStore(origin, never);
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        cache.abandonWithoutSnapshot(); // the machine went down: no snapshot
        // what a power loss can leave of files renamed without an fsync: data never written, or a short file
        List<Path> files = blockFiles();
        assertThat(files).hasSize(5);
        long size = Files.size(files.get(0));
        Files.write(files.get(0), new byte[0], java.nio.file.StandardOpenOption.TRUNCATE_EXISTING);
        try (var ch = java.nio.channels.FileChannel.open(files.get(1), java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.allocate((int) (Files.size(files.get(1)) - 200)), 200); // zeros after the header
        }
        assertThat(size).isPositive();
        try (CachingStore reopened = new CachingStore(origin, never)) {
            assertThat(reopened.readBytes(key, null)).isEqualTo(bytes);
            assertThat(reopened.stats().evictedCorrupt()).as("the empty file at the scan, the zeroed one at its first read")
                    .isEqualTo(2);
        }
    }
}
