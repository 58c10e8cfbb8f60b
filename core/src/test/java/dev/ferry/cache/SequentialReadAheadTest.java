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
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Read-ahead for plan-less readers, counted in upstream requests (a tracking store), never timed: the
 * executor runs fetches on the reading thread, or holds them until the test runs them.
 */
class SequentialReadAheadTest {
    static final int BLOCK = 64 * 1024;
    static final int BLOCKS = 40;

    @TempDir
    Path tmp;
    TrackingStore tracking;
    CachingStore cache;
    ObjectKey key = ObjectKey.of("data", "big.bin");
    byte[] bytes;

    @BeforeEach
    void setUp() throws IOException {
        FileObjectStore origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        bytes = new byte[BLOCKS * BLOCK];
        new Random(3).nextBytes(bytes);
        origin.put(key, PutBody.ofBytes(bytes));
        tracking = new TrackingStore(origin);
        cache = new CachingStore(tracking, CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK));
    }

    @AfterEach
    void tearDown() throws IOException {
        cache.close();
    }

    byte[] readBlock(long index) throws IOException {
        byte[] got = cache.readBytes(key, ByteRange.of(index * BLOCK, BLOCK));
        assertThat(got).isEqualTo(Arrays.copyOfRange(bytes, (int) index * BLOCK, (int) (index + 1) * BLOCK));
        return got;
    }

    List<ByteRange> gets() {
        return tracking.calls().stream().filter(c -> c.op() == Op.GET).map(TrackingStore.Call::range).toList();
    }

    @Test
    void sequentialReader_afterTwoReads_findsEveryLaterBlockFetchedAhead_oneRangedGetPerBlock() throws IOException {
        SequentialReadAhead ahead = SequentialReadAhead.attach(cache, new SequentialReadAhead.Config(2, 16, 4, 1L << 30, 16), Runnable::run);
        for (long i = 0; i < 10; i++) {
            readBlock(i);
        }
        CacheStats s = cache.stats();
        // block 0 and 1 are the reader's misses; reading 1 fetches 2-5 ahead; reading k (2..9) fetches k+4: 6..13
        assertThat(s.misses()).isEqualTo(2);
        assertThat(s.hits()).isEqualTo(8);
        assertThat(s.prefetchedBlocks()).isEqualTo(12);
        assertThat(ahead.scheduledBlocks()).isEqualTo(12);
        assertThat(gets()).hasSize(14).allSatisfy(r -> assertThat(r.length()).isEqualTo(BLOCK));
        assertThat(ahead.inFlightBytes()).isZero();
    }

    @Test
    void randomReader_getsNoReadAhead() throws IOException {
        SequentialReadAhead.attach(cache, new SequentialReadAhead.Config(2, 2, 4, 1L << 30, 16), Runnable::run);
        for (long i : new long[] {30, 3, 17, 9, 24, 0}) {
            readBlock(i);
        }
        assertThat(cache.stats().prefetchedBlocks()).isZero();
        assertThat(tracking.count(Op.GET)).isEqualTo(6);
    }

    @Test
    void rereadingTheSameBlock_isNotSequential() throws IOException {
        SequentialReadAhead.attach(cache, new SequentialReadAhead.Config(2, 16, 4, 1L << 30, 16), Runnable::run);
        for (int i = 0; i < 5; i++) {
            readBlock(0);
        }
        assertThat(cache.stats().prefetchedBlocks()).isZero();
        assertThat(tracking.count(Op.GET)).isEqualTo(1);
    }

    @Test
    void wholeObjectGet_readsAheadPastItsFirstRun() throws IOException {
        // runs are at most 4 blocks here: without read-ahead, each next run starts only when the reader gets there
        cache.close();
        cache = new CachingStore(tracking, CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK).withMaxRunBlocks(4));
        SequentialReadAhead.attach(cache, new SequentialReadAhead.Config(2, 16, 8, 1L << 30, 16), Runnable::run);
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        CacheStats s = cache.stats();
        // the reader's own run is blocks 0-3; from block 1 on, every block up to 8 ahead is fetched ahead
        assertThat(s.misses()).isEqualTo(4);
        assertThat(s.prefetchedBlocks()).isEqualTo(BLOCKS - 4);
        assertThat(s.hits()).isEqualTo(BLOCKS - 4);
    }

    @Test
    void footerThenBody_readsAheadAsASequentialReaderDoes() throws IOException {
        SequentialReadAhead ahead = SequentialReadAhead.attach(cache, new SequentialReadAhead.Config(2, 16, 4, 1L << 30, 16), Runnable::run);
        readBlock(BLOCKS - 1); // a zip's or Parquet's index, read first
        for (long i = 0; i < 10; i++) {
            readBlock(i);
        }
        // as without the footer read: block 1 fetches 2-5 ahead, block k (2..9) fetches k+4
        assertThat(ahead.scheduledBlocks()).isEqualTo(12);
        assertThat(cache.stats().misses()).as("the footer and blocks 0 and 1").isEqualTo(3);
        assertThat(tracking.count(Op.GET)).isEqualTo(15);
    }

    @Test
    void jumpToTheEndMidRead_doesNotStopTheReadAhead() throws IOException {
        SequentialReadAhead ahead = SequentialReadAhead.attach(cache, new SequentialReadAhead.Config(2, 2, 4, 1L << 30, 16), Runnable::run);
        readBlock(0);
        readBlock(1); // 2-5 ahead
        readBlock(BLOCKS - 1);
        readBlock(2); // 6 ahead
        assertThat(ahead.scheduledBlocks()).isEqualTo(5);
    }

    @Test
    void smallObject_isFetchedWholeAtItsFirstRead_inParallelBlocks_wherEverItStarts() throws IOException {
        // 40 blocks, at most 40 whole: the first read (the last block, a footer) makes every other block due at once
        SequentialReadAhead ahead = SequentialReadAhead.attach(cache, new SequentialReadAhead.Config(2, 16, 4, 1L << 30, 16, BLOCKS, false),
                Runnable::run);
        readBlock(BLOCKS - 1);
        assertThat(ahead.scheduledBlocks()).isEqualTo(BLOCKS - 1);
        assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        assertThat(gets()).as("one ranged GET per block, each once").hasSize(BLOCKS).allSatisfy(r -> assertThat(r.length()).isEqualTo(BLOCK));
        assertThat(ahead.scheduledBlocks()).as("nothing more is due").isEqualTo(BLOCKS - 1);
    }

    @Test
    void objectLargerThanTheWholeThreshold_isNotFetchedWhole() throws IOException {
        SequentialReadAhead ahead = SequentialReadAhead.attach(cache, new SequentialReadAhead.Config(2, 2, 4, 1L << 30, 16, BLOCKS - 1, false),
                Runnable::run);
        readBlock(BLOCKS - 1);
        readBlock(17);
        assertThat(ahead.scheduledBlocks()).isZero();
    }

    @Test
    void budget_boundsBytesFetchedAhead_andBlocksLeftOutAreDueAgainLater() throws IOException {
        Queue<Runnable> held = new ArrayDeque<>();
        Executor holding = held::add;
        SequentialReadAhead ahead = SequentialReadAhead.attach(cache, new SequentialReadAhead.Config(2, 16, 4, 2L * BLOCK, 16), holding);
        readBlock(0);
        readBlock(1);
        assertThat(held).as("4 blocks due, 2 fit the budget").hasSize(2);
        assertThat(ahead.inFlightBytes()).isEqualTo(2L * BLOCK);
        assertThat(ahead.overBudgetBlocks()).isEqualTo(2);
        while (!held.isEmpty()) {
            held.poll().run();
        }
        assertThat(ahead.inFlightBytes()).isZero();
        assertThat(cache.stats().prefetchedBlocks()).isEqualTo(2);
        readBlock(2); // a hit; blocks 4 and 5 are due again, and 6
        assertThat(cache.stats().hits()).isEqualTo(1);
        assertThat(held).hasSize(2);
        tracking.reset();
        while (!held.isEmpty()) {
            held.poll().run();
        }
        assertThat(gets()).containsExactly(ByteRange.of(4L * BLOCK, BLOCK), ByteRange.of(5L * BLOCK, BLOCK));
    }
}
