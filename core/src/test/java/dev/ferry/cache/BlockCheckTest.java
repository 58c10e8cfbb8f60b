package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.policy.LruPolicy;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When a block a run has just fetched may be read by another reader (the read-ahead's blocks, read by the reader it
 * ran ahead of) without being read back and checked first: where the file system's ctime shows every change after
 * a stat ({@link BlockCheck#probeCtime}), and only while the file is unchanged. Over a real fetcher, index and
 * folder; the run is fetched on the test's thread.
 */
class BlockCheckTest {
    static final int BLOCK = 64 * 1024;

    @TempDir
    Path tmp;

    CacheCounters counters = new CacheCounters();
    CacheLayout layout;
    BlockIndex index;
    OpenFiles openFiles = new OpenFiles(16);
    ObjectMeta meta;
    Function<BlockCheck, BlockFetcher> fetcher;

    @BeforeEach
    void setUp() throws IOException {
        FileObjectStore origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        byte[] bytes = new byte[2 * BLOCK];
        new Random(3).nextBytes(bytes);
        meta = origin.put(ObjectKey.of("data", "shard-0.tar"), PutBody.ofBytes(bytes));
        layout = new CacheLayout(tmp.resolve("cache"));
        Files.createDirectories(layout.blocks());
        Files.createDirectories(layout.tmp());
        CacheConfig config = CacheConfig.of(layout.dir(), 64L * BLOCK).withBlockSize(BLOCK);
        index = new BlockIndex(config, layout, new LruPolicy<>(), counters, path -> { }, dev.ferry.time.Clock.system());
        fetcher = check -> new BlockFetcher(config, layout, origin, index, counters, check, new UnsyncedBlocks(1024),
                key -> { }, Runnable::run, Clock.system());
    }

    /** Fetches block 0 through a run checked by {@code check}, and pins it for a read. */
    BlockEntry fetched(BlockCheck check) throws IOException {
        BlockFetcher.Claim claim = fetcher.apply(check).claimRun(meta, 0, 0, false);
        assertThat(claim.outcome()).isEqualTo(BlockFetcher.Claim.Outcome.STARTED);
        assertThat(claim.run().fetch()).isEqualTo(BLOCK);
        BlockEntry e = index.pinForRead(new BlockId(meta.key(), meta.etag(), 0), true);
        assertThat(e).isNotNull();
        return e;
    }

    boolean trustedNow(BlockCheck check, BlockEntry e) throws IOException {
        OpenFiles.Handle file = openFiles.acquire(e.path);
        try {
            return check.trusted(e, file, 0, BLOCK);
        } finally {
            file.release();
        }
    }

    @Test
    void probe_answersTheSameEachTime_andLeavesNoFileBehind() throws IOException {
        boolean first = BlockCheck.changesShowAfterStat(layout.tmp());
        assertThat(BlockCheck.changesShowAfterStat(layout.tmp())).isEqualTo(first);
        try (var left = Files.list(layout.tmp())) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void probe_ofAFolderThatIsNotThere_saysNo() {
        assertThat(BlockCheck.changesShowAfterStat(tmp.resolve("missing"))).isFalse();
    }

    @Test
    void withoutTheProbe_aBlockJustFetched_isCheckedByAnyOtherReader() throws IOException {
        BlockCheck check = new BlockCheck(VerifyMode.ON_LOAD, counters, Clock.system()); // as on a coarse-clock file system
        BlockEntry e = fetched(check);
        assertThat(trustedNow(check, e)).as("its witness never settles: a write in the same tick would not show").isFalse();
        OpenFiles.Handle file = openFiles.acquire(e.path);
        try {
            assertThat(check.trustedAsFetched(e, file, 0, BLOCK)).as("its own run's reader reads it as fetched").isTrue();
        } finally {
            file.release();
        }
    }

    @Test
    void whereCtimeShowsEveryChangeAfterAStat_aBlockJustFetched_isTrusted_untilItsFileChanges() throws IOException {
        BlockCheck check = new BlockCheck(VerifyMode.ON_LOAD, counters, Clock.system());
        Assumptions.assumeTrue(check.probeCtime(layout.tmp()), "needs multigrain or fine-grained ctime (Linux 6.13+ ext4, xfs, btrfs, tmpfs)");
        BlockEntry e = fetched(check);
        assertThat(trustedNow(check, e)).as("read by another reader at once, as fetched: no read back").isTrue();
        assertThat(trustedNow(check, e)).isTrue();

        Files.setLastModifiedTime(e.path, FileTime.fromMillis(0)); // a change at once: new ctime, same bytes
        assertThat(trustedNow(check, e)).as("changed a moment after the fetch: checked again").isFalse();
        check.check(e);
        assertThat(trustedNow(check, e)).as("checked, and unchanged since").isTrue();

        try (var ch = FileChannel.open(e.path, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), e.headerLength + 10);
        }
        assertThat(trustedNow(check, e)).as("a write right after the check shows").isFalse();
    }
}
