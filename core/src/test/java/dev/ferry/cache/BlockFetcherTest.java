package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.cache.policy.LruPolicy;
import dev.ferry.store.ByteRange;
import dev.ferry.store.FaultyStore;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.TrackingStore.Op;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Await;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The single-flight fetcher on its own, over a real index and a real {@link FileObjectStore} as upstream: claims,
 * runs of adjacent misses, failures and their waiters, prefetch, a reader leaving, close. Runs are fetched on the
 * test's thread ({@link BlockFetcher.Run#fetch}), so each step is seen in order; readers go through the fills the
 * fetcher hands out, as {@link BlockStream} does.
 */
class BlockFetcherTest {
    static final int BLOCK = 64 * 1024;
    static final int RUN = 4;

    @TempDir
    Path tmp;
    FileObjectStore origin;
    FaultyStore faulty;
    TrackingStore upstream;
    CacheLayout layout;
    CacheCounters counters = new CacheCounters();
    BlockIndex index;
    BlockCheck check;
    List<ObjectKey> changed = new ArrayList<>();
    BlockFetcher fetcher;
    ObjectKey key = ObjectKey.of("data", "shard-0.tar");
    byte[] bytes;
    ObjectMeta meta;

    @BeforeEach
    void setUp() throws IOException {
        origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        bytes = new byte[10 * BLOCK + 100];
        new Random(7).nextBytes(bytes);
        meta = origin.put(key, PutBody.ofBytes(bytes));
        faulty = new FaultyStore(origin);
        upstream = new TrackingStore(faulty);
        layout = new CacheLayout(tmp.resolve("cache"));
        Files.createDirectories(layout.blocks());
        Files.createDirectories(layout.tmp());
        fetcher = open(CacheConfig.of(layout.dir(), 64L * BLOCK).withBlockSize(BLOCK).withMaxRunBlocks(RUN));
    }

    BlockFetcher open(CacheConfig config) {
        index = new BlockIndex(config, layout, new LruPolicy<>(), counters, path -> { }, dev.ferry.time.Clock.system());
        check = new BlockCheck(config.verify(), counters, Clock.system());
        return new BlockFetcher(config, layout, upstream, index, counters, check, new UnsyncedBlocks(1024), changed::add,
                Runnable::run, Clock.system());
    }

    BlockId block(long i) {
        return new BlockId(key, meta.etag(), i);
    }

    BlockFetcher.Run claim(long first, long last) throws IOException {
        BlockFetcher.Claim claim = fetcher.claimRun(meta, first, last, false);
        assertThat(claim.outcome()).isEqualTo(BlockFetcher.Claim.Outcome.STARTED);
        return claim.run();
    }

    List<ByteRange> getRanges() {
        return upstream.calls().stream().filter(c -> c.op() == Op.GET).map(TrackingStore.Call::range).toList();
    }

    /** The data of resident block {@code i}, read back from its file and checked against its header and CRC32C. */
    byte[] resident(long i) throws IOException {
        BlockEntry e = index.pinForRead(block(i), false);
        assertThat(e).as("block %d is resident", i).isNotNull();
        try {
            return check.readChecked(e);
        } finally {
            index.unpin(e);
        }
    }

    byte[] expected(long i) {
        return Arrays.copyOfRange(bytes, (int) i * BLOCK, (int) Math.min(bytes.length, (i + 1) * BLOCK));
    }

    List<Path> temporaries() throws IOException {
        try (Stream<Path> files = Files.list(layout.tmp())) {
            return files.toList();
        }
    }

    @Test
    void miss_isFetchedWithTheAdjacentMisses_inOneRangedGet_ofAtMostMaxRunBlocks() throws IOException {
        BlockFetcher.Run run = claim(0, 10);

        assertThat(run.fetch()).isEqualTo(RUN * BLOCK);

        assertThat(getRanges()).containsExactly(ByteRange.of(0, (long) RUN * BLOCK));
        for (long i = 0; i < RUN; i++) {
            assertThat(resident(i)).isEqualTo(expected(i));
            assertThat(fetcher.inFlight(block(i))).isNull();
        }
        assertThat(index.isResident(block(RUN))).isFalse();
        assertThat(counters.misses.sum()).isEqualTo(RUN);
        assertThat(counters.bytesFromUpstream.sum()).isEqualTo((long) RUN * BLOCK);
        assertThat(counters.upstreamRequests.sum()).isEqualTo(1);
        assertThat(temporaries()).isEmpty();
    }

    @Test
    void run_endsBeforeTheFirstBlockThatIsResidentOrInFlight() throws IOException {
        claim(2, 2).fetch();
        BlockFetcher.Run other = claim(5, 5); // claimed by another reader, not fetched yet
        upstream.reset();

        BlockFetcher.Run first = claim(0, 9);
        BlockFetcher.Run second = claim(3, 9);

        assertThat(first.last).isEqualTo(1);
        assertThat(second.last).isEqualTo(4);
        assertThat(getRanges()).containsExactly(ByteRange.of(0, 2L * BLOCK), ByteRange.of(3L * BLOCK, 2L * BLOCK));
        assertThat(fetcher.inFlight(block(5))).isSameAs(other.fill(5));
        first.fetch();
        second.fetch();
        other.fetch();
    }

    @Test
    void concurrentClaimsOfOneMissingBlock_startOneRun_andTheOthersFindItsFill() throws Exception {
        int readers = 8;
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(readers);
        List<Future<BlockFetcher.Claim>> claims = new ArrayList<>();
        ConcurrentLinkedQueue<BlockFill> found = new ConcurrentLinkedQueue<>();
        try {
            for (int i = 0; i < readers; i++) {
                claims.add(pool.submit(() -> {
                    go.await();
                    BlockFetcher.Claim c = fetcher.claimRun(meta, 0, 0, false);
                    if (c.outcome() == BlockFetcher.Claim.Outcome.TAKEN) {
                        found.add(fetcher.inFlight(block(0)));
                    }
                    return c;
                }));
            }
            go.countDown();
            List<BlockFetcher.Run> started = new ArrayList<>();
            for (Future<BlockFetcher.Claim> f : claims) {
                BlockFetcher.Claim c = f.get();
                if (c.outcome() == BlockFetcher.Claim.Outcome.STARTED) {
                    started.add(c.run());
                }
            }

            assertThat(started).hasSize(1);
            assertThat(found).hasSize(readers - 1).allSatisfy(fill -> assertThat(fill).isSameAs(started.get(0).fill(0)));
            assertThat(upstream.count(Op.GET)).isEqualTo(1);
            started.get(0).fetch();
        } finally {
            pool.shutdownNow();
        }
        assertThat(resident(0)).isEqualTo(expected(0));
        assertThat(fetcher.claimRun(meta, 0, 0, false).outcome()).as("resident now").isEqualTo(BlockFetcher.Claim.Outcome.TAKEN);
        assertThat(upstream.count(Op.GET)).isEqualTo(1);
        assertThat(counters.misses.sum()).isEqualTo(1);
    }

    @Test
    void failedFetch_isReportedToEveryWaiter_theRestIsReleased_andALaterClaimFetchesAgain() throws Exception {
        faulty.breakStreams(1, BLOCK); // block 0 arrives whole, then the connection resets
        BlockFetcher.Run run = claim(0, 2);
        int waiters = 3;
        ConcurrentLinkedQueue<Throwable> seen = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < waiters; i++) {
            BlockFill fill = run.fill(1);
            assertThat(fill.attach()).isTrue();
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    fill.read(new byte[BLOCK], 0, BLOCK, 0);
                    seen.add(new AssertionError("read bytes that never came"));
                } catch (IOException e) {
                    seen.add(e);
                } finally {
                    fill.detach();
                }
            }));
        }
        Await.until("the waiters wait for block 1", Duration.ofSeconds(30),
                () -> threads.stream().allMatch(t -> t.getState() == Thread.State.WAITING));
        BlockFill abandoned = run.fill(2);

        assertThatThrownBy(run::fetch).isInstanceOf(SocketException.class);
        for (Thread t : threads) {
            t.join(30_000);
        }

        assertThat(seen).hasSize(waiters).allSatisfy(e -> assertThat(e).isInstanceOf(SocketException.class));
        assertThat(abandoned.attach()).isTrue();
        assertThatThrownBy(() -> abandoned.read(new byte[1], 0, 1, 0)).as("its readers fetch it themselves")
                .isInstanceOf(BlockFill.Abandoned.class);
        abandoned.detach();
        assertThat(fetcher.inFlight(block(1))).isNull();
        assertThat(fetcher.inFlight(block(2))).isNull();
        assertThat(index.usage()).as("block 0 only: the rest's room is given back").isEqualTo(new BlockIndex.Usage(1, BLOCK));
        assertThat(temporaries()).as("no partial block left").isEmpty();

        BlockFetcher.Run again = claim(1, 2);
        again.fetch();
        assertThat(resident(1)).isEqualTo(expected(1));
        assertThat(resident(2)).isEqualTo(expected(2));
        assertThat(upstream.count(Op.GET)).isEqualTo(2);
    }

    @Test
    void fetchPinnedToAVersionUpstreamNoLongerHas_tellsOfTheChange_andClaimsNothing() throws IOException {
        ObjectMeta stale = new ObjectMeta(key, meta.size(), "not-the-etag", null, meta.lastModified());

        assertThatThrownBy(() -> fetcher.claimRun(stale, 0, 3, false)).isInstanceOfSatisfying(StoreException.class,
                e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.PRECONDITION_FAILED));

        assertThat(changed).containsExactly(key);
        assertThat(fetcher.inFlight(new BlockId(key, "not-the-etag", 0))).isNull();
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(0, 0));
    }

    @Test
    void blockThePolicyRefuses_isNotClaimed_andNotFetched() throws IOException {
        fetcher = open(CacheConfig.of(layout.dir(), BLOCK - 1).withBlockSize(BLOCK)); // no block fits

        assertThat(fetcher.claimRun(meta, 0, 3, false).outcome()).isEqualTo(BlockFetcher.Claim.Outcome.REFUSED);

        assertThat(fetcher.inFlight(block(0))).isNull();
        assertThat(upstream.count(Op.GET)).isZero();
    }

    @Test
    void prefetch_fetchesOnlyTheBlocksNeitherResidentNorInFlight_andCountsThemAsPrefetched() throws IOException {
        claim(1, 1).fetch();
        BlockFetcher.Run other = claim(3, 3);
        upstream.reset();

        long fetched = fetcher.prefetch(meta, ByteRange.of(0, 5L * BLOCK));

        assertThat(fetched).isEqualTo(3L * BLOCK); // 0, 2 and 4
        assertThat(getRanges()).containsExactly(ByteRange.of(0, BLOCK), ByteRange.of(2L * BLOCK, BLOCK), ByteRange.of(4L * BLOCK, BLOCK));
        assertThat(counters.prefetchedBlocks.sum()).isEqualTo(3);
        assertThat(counters.misses.sum()).as("a prefetch is not an access").isEqualTo(1);
        assertThat(resident(4)).isEqualTo(expected(4));
        other.fetch();
        upstream.reset();
        assertThat(fetcher.prefetch(meta, ByteRange.of(0, 5L * BLOCK))).isZero();
        assertThat(upstream.count(Op.GET)).isZero();
    }

    @Test
    void readerLeaving_stopsTheRunAfterTheBlockUnderWay_andFreesTheRest() throws IOException {
        BlockFetcher.Run run = claim(0, 3);

        run.leave();

        assertThat(run.fetch()).isEqualTo(BLOCK);
        assertThat(resident(0)).isEqualTo(expected(0));
        for (long i = 1; i <= 3; i++) {
            assertThat(fetcher.inFlight(block(i))).isNull();
            assertThat(index.isResident(block(i))).isFalse();
        }
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(1, BLOCK));
    }

    @Test
    void afterClose_aRunFetchesNothing_andGivesItsClaimsBack() throws IOException {
        BlockFetcher.Run run = claim(0, 3);

        fetcher.close();

        assertThatThrownBy(run::fetch).isInstanceOf(IOException.class).hasMessageContaining("closing");
        assertThat(fetcher.inFlight(block(0))).isNull();
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(0, 0));
        assertThat(temporaries()).isEmpty();
    }
}
