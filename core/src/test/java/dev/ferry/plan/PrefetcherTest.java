package dev.ferry.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.policy.MinPolicy;
import dev.ferry.store.ByteRange;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Await;
import dev.ferry.time.Clock;
import dev.ferry.time.ManualClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The clairvoyant prefetcher over a real local tier and folder store: its bounds (blocks ahead, the policy's
 * admission) and its schedule (time to need from the consumer's pace, on a manual clock). Never timed: the
 * tests wait for what must happen, and check that what must not happen did not within a grace period.
 */
class PrefetcherTest {
    static final int BLOCK = 64 * 1024;
    static final int BLOCKS_PER_OBJECT = 10;

    @TempDir
    Path tmp;

    /** Three objects of ten blocks in the origin; the future reads them front to back, one after the other. */
    List<BlockId> origin(FileObjectStore store) throws IOException {
        store.createBucket("data");
        List<BlockId> future = new ArrayList<>();
        Random random = new Random(5);
        for (int o = 0; o < 3; o++) {
            byte[] bytes = new byte[BLOCKS_PER_OBJECT * BLOCK];
            random.nextBytes(bytes);
            ObjectMeta meta = store.put(ObjectKey.of("data", "shard-" + o), PutBody.ofBytes(bytes));
            for (int b = 0; b < BLOCKS_PER_OBJECT; b++) {
                future.add(new BlockId(meta.key(), meta.etag(), b));
            }
        }
        return future;
    }

    static Prefetcher.Target target(CachingStore cache) {
        return Prefetcher.Target.over(cache);
    }

    static void await(BooleanSupplier condition) throws InterruptedException {
        Await.until("the prefetcher", Duration.ofSeconds(30), condition::getAsBoolean);
    }

    /** Waits until the driver has looked at the current position and started all it would: nothing more comes. */
    static void quiet(Prefetcher p) throws InterruptedException {
        Await.until("the prefetcher to settle", Duration.ofSeconds(30), p::settled);
    }

    @Test
    void beforeThePaceIsMeasured_keepsOneBlockPerSlotAhead() throws Exception {
        FileObjectStore store = new FileObjectStore(tmp.resolve("origin"));
        List<BlockId> future = origin(store);
        ManualClock clock = new ManualClock(); // stands still: the consumer's pace is never measured
        try (CachingStore cache = new CachingStore(store, CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK));
                Prefetcher p = new Prefetcher("t", future, target(cache), new Prefetcher.Settings(3, 64, 4, 100_000_000L), clock)) {
            p.start();
            await(() -> p.stats().started() == 3);
            quiet(p);
            assertThat(p.stats().started()).isEqualTo(3);
            assertThat(cache.residentOrInFlight(future.get(3))).isFalse();
            p.advance(2);
            await(() -> p.stats().started() == 5);
            quiet(p);
            assertThat(p.stats().started()).isEqualTo(5);
        }
    }

    @Test
    void holdsAtMostItsBoundAhead_andFollowsTheConsumer() throws Exception {
        FileObjectStore store = new FileObjectStore(tmp.resolve("origin"));
        List<BlockId> future = origin(store);
        ManualClock clock = new ManualClock();
        // fetches assumed slow (10 s) against a consumer at 10 blocks/s: every block is due, only the bound holds
        try (CachingStore cache = new CachingStore(store, CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK));
                Prefetcher p = new Prefetcher("t", future, target(cache), new Prefetcher.Settings(2, 5, 4, 10_000_000_000L), clock)) {
            clock.advanceMillis(100);
            p.advance(1);
            p.start();
            await(() -> p.stats().started() == 5 && cache.residentOrInFlight(future.get(5)));
            quiet(p);
            assertThat(p.stats().started()).isEqualTo(5);
            assertThat(cache.residentOrInFlight(future.get(6))).isFalse();

            p.advance(4); // three more blocks consumed: three more may be held ahead
            await(() -> p.stats().started() == 8);
            quiet(p);
            assertThat(p.stats().started()).isEqualTo(8);
            assertThat(cache.residentOrInFlight(future.get(0))).as("passed before the prefetcher started").isFalse();
            // a started fetch is in flight at the tier once its task runs: wait for the eight
            await(() -> IntStream.rangeClosed(1, 8).allMatch(i -> cache.residentOrInFlight(future.get(i))));
            assertThat(cache.residentOrInFlight(future.get(9))).isFalse();
            // the tier counts a block once it is in place, the prefetcher once its fetch call has returned: wait for both
            await(() -> cache.stats().prefetchedBlocks() == 8 && p.stats().bytes() == 8L * BLOCK);
            assertThat(p.stats().failed()).isZero();
        }
    }

    @Test
    void startsABlockWhenItsTimeToNeedComesWithinReach_notBefore() throws Exception {
        FileObjectStore store = new FileObjectStore(tmp.resolve("origin"));
        List<BlockId> future = origin(store);
        ManualClock clock = new ManualClock();
        try (CachingStore cache = new CachingStore(store, CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK));
                Prefetcher p = new Prefetcher("t", future, target(cache), new Prefetcher.Settings(1, 64, 20, 100_000_000L), clock)) {
            // fetches measure 0 ns on this clock, so the fetch time only falls from 100 ms: a margin of 20 keeps the
            // horizon between 20 x 100 ms x 2 (4 s) at the start and, after the 11 fetches, 20 x 8.6 ms (172 ms)
            clock.advanceMillis(10_000);
            p.advance(2); // a slow consumer: 2 blocks in 10 s
            assertThat(p.stats().pace()).isEqualTo(0.2);
            p.start();
            // the next block is 5 s away, the one after 10 s, the horizon at most 4 s: only the next is due
            await(() -> cache.residentOrInFlight(future.get(2)) && p.stats().started() == 1);
            quiet(p);
            assertThat(p.stats().started()).isEqualTo(1);
            assertThat(cache.residentOrInFlight(future.get(3))).isFalse();

            clock.advanceMillis(100);
            p.advance(20); // it sped up: 18 blocks in 100 ms; the last block is 50 ms away, within the horizon
            await(() -> p.stats().started() == 11);
            for (int i = 20; i < future.size(); i++) {
                int index = i;
                await(() -> cache.residentOrInFlight(future.get(index)));
            }
            quiet(p);
            // the blocks the consumer passed while the prefetcher waited were never fetched
            for (int i = 3; i < 20; i++) {
                assertThat(cache.residentOrInFlight(future.get(i))).as("block %d", i).isFalse();
            }
            assertThat(p.stats().started()).isEqualTo(11);
        }
    }

    @Test
    void underMin_aPrefetchedBlockIsKeptOnlyWhenNeededSoonerThanWhatItWouldEvict() throws Exception {
        FileObjectStore store = new FileObjectStore(tmp.resolve("origin"));
        List<BlockId> all = origin(store);
        List<BlockId> future = all.subList(0, 5); // A B C D E
        List<BlockId> accesses = new ArrayList<>(future);
        accesses.addAll(all.subList(0, 4)); // then A B C D again
        CacheConfig config = CacheConfig.of(tmp.resolve("cache"), 4L * BLOCK).withBlockSize(BLOCK).withWatermarks(1.0, 1.0);
        try (CachingStore cache = new CachingStore(store, config, new MinPolicy<>(accesses), Clock.system());
                Prefetcher p = new Prefetcher("t", future, target(cache), new Prefetcher.Settings(4, 64, 4, 100_000_000L), new ManualClock())) {
            p.start(); // pace unmeasured: one block per slot, A-D first
            await(() -> p.stats().bytes() == 4L * BLOCK);
            p.advance(1); // E is due now, with the tier full
            await(() -> p.stats().started() == 5 && p.stats().refused() + p.stats().bytes() / BLOCK == 5);
            // A-D fill the free room; E would evict one of them, and demand MIN would not keep E at its read (it
            // is never read again): the prefetch is refused, the residents stay
            assertThat(p.stats().refused()).isEqualTo(1);
            for (int i = 0; i < 4; i++) {
                assertThat(cache.residentOrInFlight(future.get(i))).as("block %d", i).isTrue();
            }
            assertThat(cache.residentOrInFlight(future.get(4))).isFalse();
            // the prefetch did not use up A's access: reading it is a hit, and it stays for its second use
            ObjectKey a = future.get(0).key();
            assertThat(cache.readBytes(a, ByteRange.of(0, BLOCK))).hasSize(BLOCK);
            assertThat(cache.stats().hits()).isEqualTo(1);
            assertThat(cache.stats().misses()).isZero();
        }
    }

    @Test
    void aBlockMinWouldStreamThrough_isStillPrefetched_heldForItsReadOutsideTheCapacity() throws Exception {
        FileObjectStore store = new FileObjectStore(tmp.resolve("origin"));
        List<BlockId> all = origin(store);
        BlockId never = all.get(16); // in the prefetcher's future, but the plan never reads it
        BlockId once = all.get(17);
        List<BlockId> future = new ArrayList<>(all.subList(0, 16)); // 16 blocks that fill the tier
        future.add(never);
        future.add(once);
        List<BlockId> accesses = new ArrayList<>(all.subList(0, 16));
        accesses.add(once);
        accesses.addAll(all.subList(0, 16)); // the 16 again: MIN keeps them all, and would stream `once` through
        CacheConfig config = CacheConfig.of(tmp.resolve("cache"), 16L * BLOCK).withBlockSize(BLOCK).withWatermarks(1.0, 1.0);
        try (CachingStore cache = new CachingStore(store, config, new MinPolicy<>(accesses), Clock.system());
                Prefetcher p = new Prefetcher("t", future, target(cache), new Prefetcher.Settings(16, 64, 4, 100_000_000L), new ManualClock())) {
            p.start(); // pace unmeasured: one block per slot, the 16 that fill the tier
            await(() -> p.stats().bytes() == 16L * BLOCK);
            p.advance(2); // two more are due: `never` and `once`, with the tier full
            await(() -> p.stats().bytes() == 17L * BLOCK && p.stats().refused() == 1);
            assertThat(cache.residentOrInFlight(never)).as("a block the plan never reads is not held").isFalse();
            assertThat(cache.stats().residentBlocks()).as("the held block is not in the tier's capacity").isEqualTo(16);
            assertThat(cache.stats().residentBytes()).isEqualTo(16L * BLOCK);
            assertThat(cache.readBytes(once.key(), ByteRange.of(once.index() * BLOCK, BLOCK))).hasSize(BLOCK);
            assertThat(cache.stats().hits()).as("its reader found it on disk").isEqualTo(1);
            assertThat(cache.stats().misses()).isZero();
            for (int i = 0; i < 16; i++) {
                assertThat(cache.residentOrInFlight(future.get(i))).as("block %d, kept by MIN", i).isTrue();
            }
        }
    }

    @Test
    void aRefusedBlockIsAskedForAgainOnceTheReaderHasMovedOn() throws Exception {
        FileObjectStore store = new FileObjectStore(tmp.resolve("origin"));
        List<BlockId> all = origin(store);
        BlockId a = all.get(0);
        BlockId e = all.get(4);
        List<BlockId> future = all.subList(0, 5); // A B C D E
        // A B C D E B C D E A: at E's read, demand MIN evicts A (next read last) for E (read again before A)
        List<BlockId> accesses = new ArrayList<>(future);
        accesses.addAll(all.subList(1, 5));
        accesses.add(a);
        CacheConfig config = CacheConfig.of(tmp.resolve("cache"), 4L * BLOCK).withBlockSize(BLOCK).withWatermarks(1.0, 1.0);
        try (CachingStore cache = new CachingStore(store, config, new MinPolicy<>(accesses), Clock.system());
                Prefetcher p = new Prefetcher("t", future, target(cache), new Prefetcher.Settings(4, 64, 4, 100_000_000L), new ManualClock())) {
            p.start();
            await(() -> p.stats().bytes() == 4L * BLOCK);
            p.advance(1); // E is due; A is still to be read at position 0, so evicting it now would be wrong
            await(() -> p.stats().refused() == 1);
            assertThat(cache.residentOrInFlight(e)).isFalse();
            assertThat(cache.readBytes(a.key(), ByteRange.of(0, BLOCK))).hasSize(BLOCK); // A's read
            p.advance(2); // the reader moved on: asked again, E now takes A's place, as demand MIN would at E's read
            await(() -> p.stats().bytes() == 5L * BLOCK);
            assertThat(cache.residentOrInFlight(e)).isTrue();
            assertThat(cache.residentOrInFlight(a)).isFalse();
            assertThat(p.stats().refused()).isEqualTo(1);
        }
    }

    @Test
    void aNewEpochsPrefetcher_startsFromWhatTheLastOneMeasured() throws Exception {
        FileObjectStore store = new FileObjectStore(tmp.resolve("origin"));
        List<BlockId> future = origin(store);
        ManualClock clock = new ManualClock();
        // last epoch: 0.2 blocks/s, fetches of 100 ms; unmeasured, the prefetcher would start one block per slot (8)
        Prefetcher.Stats last = new Prefetcher.Stats(30, 30L * BLOCK, 0, 0, 0, 0.2, 0.1, 0.4);
        try (CachingStore cache = new CachingStore(store, CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK));
                Prefetcher p = new Prefetcher("t", future, target(cache), new Prefetcher.Settings(8, 64, 4, 100_000_000L), clock)) {
            p.resumingFrom(last).start();
            await(() -> p.stats().started() == 1 && cache.residentOrInFlight(future.get(0)));
            quiet(p);
            assertThat(p.stats().started()).as("the next block is 5 s away at that pace").isEqualTo(1);
        }
    }
}
