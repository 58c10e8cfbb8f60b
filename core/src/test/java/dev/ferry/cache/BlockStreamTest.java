package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.cache.policy.LruPolicy;
import dev.ferry.store.ByteRange;
import dev.ferry.store.FileRegionReadable;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.TrackingStore.Op;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Await;
import dev.ferry.time.Clock;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One reader's range, block by block, over the engine that owns its parts ({@link BlockCache#read}): exact bytes
 * across block boundaries and at the ends of ranges and of the object, end of stream, regions of block files,
 * blocks from disk and from upstream mixed, a closed stream, and a reader whose block another's run abandoned.
 */
class BlockStreamTest {
    static final int BLOCK = 64 * 1024;

    @TempDir
    Path tmp;
    FileObjectStore origin;
    TrackingStore upstream;
    BlockCache cache;
    ObjectKey key = ObjectKey.of("data", "shard-0.tar");
    byte[] bytes;
    ObjectMeta meta;
    ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void setUp() throws IOException {
        origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        bytes = new byte[4 * BLOCK + 777]; // five blocks, the last short
        new Random(3).nextBytes(bytes);
        meta = origin.put(key, PutBody.ofBytes(bytes));
        cache = open(origin);
    }

    BlockCache open(ObjectStore below) {
        upstream = new TrackingStore(below);
        CacheConfig config = CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK);
        return new BlockCache(upstream, config, new LruPolicy<>(), Clock.system(), k -> { });
    }

    @AfterEach
    void tearDown() {
        cache.close();
        pool.shutdownNow();
    }

    InputStream read(long offset, long length) {
        return cache.read(meta, ByteRange.of(offset, length));
    }

    byte[] slice(long from, long to) {
        return Arrays.copyOfRange(bytes, (int) from, (int) to);
    }

    List<ByteRange> getRanges() {
        return upstream.calls().stream().filter(c -> c.op() == Op.GET).map(TrackingStore.Call::range).toList();
    }

    @Test
    void wholeObject_readInChunksThatStraddleBlocks_isExact_thenEndsForGood() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] chunk = new byte[1000]; // not a divisor of the block size: reads land across every boundary
        try (InputStream in = read(0, bytes.length)) {
            for (int n; (n = in.read(chunk, 0, chunk.length)) != -1; ) {
                assertThat(n).as("a read before the end returns bytes").isPositive();
                out.write(chunk, 0, n);
            }
            assertThat(out.toByteArray()).isEqualTo(bytes);
            assertThat(in.read(chunk, 0, chunk.length)).isEqualTo(-1);
            assertThat(in.read()).isEqualTo(-1);
        }
    }

    @Test
    void aZeroLengthRead_returnsZero_beforeTheEndAndAtIt_andFetchesNothing() throws IOException {
        try (InputStream in = read(0, bytes.length)) {
            assertThat(in.read(new byte[10], 0, 0)).as("before the first byte").isZero();
            assertThat(getRanges()).as("nothing asked, nothing fetched").isEmpty();
            in.skipNBytes(bytes.length);
            assertThat(in.read(new byte[10], 0, 0)).as("at the end: InputStream's contract, not -1").isZero();
            assertThat(in.read()).isEqualTo(-1);
        }
    }

    @Test
    void unalignedRange_readsExactlyItsBytes_fetchingOnlyTheBlocksItTouches() throws IOException {
        long from = BLOCK - 10;
        long to = 3L * BLOCK + 10;

        try (InputStream in = read(from, to - from)) {
            assertThat(in.readAllBytes()).isEqualTo(slice(from, to));
            assertThat(in.read()).as("the range ends, not the object").isEqualTo(-1);
        }

        assertThat(getRanges()).containsExactly(ByteRange.of(0, 4L * BLOCK));
    }

    @Test
    void rangeToTheObjectsEnd_readsTheShortLastBlock() throws IOException {
        long from = 4L * BLOCK - 5;

        try (InputStream in = read(from, bytes.length - from)) {
            assertThat(in.readNBytes(1 << 20)).isEqualTo(slice(from, bytes.length));
            assertThat(in.read(new byte[10], 0, 10)).isEqualTo(-1);
        }
    }

    @Test
    void singleByteReads_areUnsigned_acrossABoundary_andAnEmptyReadBeforeTheEndReturnsZero() throws IOException {
        try (InputStream in = read(BLOCK - 2, 4)) {
            assertThat(in.read(new byte[1], 0, 0)).isZero();
            for (int i = 0; i < 4; i++) {
                assertThat(in.read()).isEqualTo(bytes[BLOCK - 2 + i] & 0xff);
            }
            assertThat(in.read()).isEqualTo(-1);
        }
    }

    @Test
    void residentBlocksComeFromDisk_andOnlyTheMissingOnesFromUpstream() throws IOException {
        try (InputStream in = read(BLOCK, BLOCK)) {
            in.readAllBytes();
        }
        upstream.reset();

        try (InputStream in = read(0, 3L * BLOCK)) {
            assertThat(in.readAllBytes()).isEqualTo(slice(0, 3L * BLOCK));
        }

        assertThat(getRanges()).containsExactly(ByteRange.of(0, BLOCK), ByteRange.of(2L * BLOCK, BLOCK));
        assertThat(cache.stats().hits()).isEqualTo(1);
        assertThat(cache.stats().misses()).isEqualTo(3);
    }

    @Test
    void regions_coverTheRangeExactly_eachWithinOneBlock_thenNull() throws IOException {
        long from = 100;
        long to = 3L * BLOCK + 50;
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        try (InputStream in = read(from, to - from)) {
            FileRegionReadable regions = (FileRegionReadable) in;
            assertThatThrownBy(() -> regions.nextRegion(0)).isInstanceOf(IllegalArgumentException.class);
            long at = from;
            for (FileRegionReadable.Region r; (r = regions.nextRegion(1 << 20)) != null; ) {
                try {
                    assertThat(at / BLOCK).as("region at %d of %d bytes stays in its block", at, r.length())
                            .isEqualTo((at + r.length() - 1) / BLOCK);
                    ByteBuffer buf = ByteBuffer.allocate((int) r.length());
                    while (buf.hasRemaining()) {
                        assertThat(r.channel().read(buf, r.position() + buf.position())).isNotNegative();
                    }
                    out.write(buf.array());
                    at += r.length();
                } finally {
                    r.release();
                }
            }
            assertThat(in.read()).isEqualTo(-1);
        }

        assertThat(out.toByteArray()).isEqualTo(slice(from, to));
    }

    @Test
    void closedStream_refusesReads_andClosesOnce() throws IOException {
        InputStream in = read(0, BLOCK);
        assertThat(in.read()).isEqualTo(bytes[0] & 0xff);

        in.close();
        in.close();

        assertThatThrownBy(in::read).isInstanceOf(IOException.class).hasMessageContaining("closed");
    }

    @Test
    void readerOfABlockThatAnotherReadersRunAbandoned_fetchesItItself() throws Exception {
        cache.close();
        StreamThroughTest.GatedStore gated = new StreamThroughTest.GatedStore(origin);
        cache = open(gated);
        InputStream first = read(0, bytes.length); // its run claims all five blocks
        assertThat(first.readNBytes(100)).isEqualTo(slice(0, 100)); // the fetch waits at the gate, inside block 0
        Future<byte[]> second = pool.submit(() -> {
            try (InputStream in = read(2L * BLOCK, BLOCK)) {
                return in.readAllBytes();
            }
        });
        Await.until("the second reader waits on the first's block 2", Duration.ofSeconds(30), () -> cache.stats().hits() == 1);

        first.close(); // block 0 is finished for the cache, blocks 1-4 abandoned
        gated.gate.countDown();

        assertThat(second.get(30, TimeUnit.SECONDS)).isEqualTo(slice(2L * BLOCK, 3L * BLOCK));
        assertThat(getRanges()).containsExactly(ByteRange.of(0, bytes.length), ByteRange.of(2L * BLOCK, BLOCK));
    }
}
