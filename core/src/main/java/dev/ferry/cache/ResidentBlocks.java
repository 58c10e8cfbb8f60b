package dev.ferry.cache;

import dev.ferry.store.ByteRange;
import dev.ferry.store.FileRegionReadable;
import dev.ferry.store.ObjectMeta;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How resident blocks leave the disk: pinned while they are used, trusted or checked first as {@link BlockCheck}
 * says, then either read by a {@link BlockStream} ({@link #source}: a {@link BlockSource} over the block's file) or
 * handed over as regions of their files, for a server to send file-to-socket ({@link #regions}). A block that fails
 * its check is dropped (its reader fetches it again).
 *
 * <p>Thread-safe: the index guards the pins, {@link OpenFiles} its shared handles, and {@link BlockCheck} keeps what
 * it knows on the entries.
 */
final class ResidentBlocks {
    private static final Logger LOG = LoggerFactory.getLogger(ResidentBlocks.class);

    private final CacheConfig config;
    private final BlockIndex blockIndex;
    private final CacheCounters counters;
    private final OpenFiles openFiles;
    private final BlockCheck check;
    private final ReadObserver observer;

    ResidentBlocks(CacheConfig config, BlockIndex blockIndex, CacheCounters counters, OpenFiles openFiles, BlockCheck check,
            ReadObserver observer) {
        this.config = config;
        this.blockIndex = blockIndex;
        this.counters = counters;
        this.openFiles = openFiles;
        this.check = check;
        this.observer = observer;
    }

    /**
     * A pinned source over a resident block for a read of {@code length} bytes of its data from {@code from},
     * or null when it is not (or no longer) usable. The block is checked first unless {@link BlockCheck} trusts
     * it; a checked block is then read from its file like a trusted one, so that a reader that stops reading
     * holds none of it in memory, except under {@link VerifyMode#ALWAYS}, which serves the copy it checked. One
     * that fails is dropped (the reader fetches it again). With {@code access} false the read is not an access of
     * its own (the block came from a fetch this reader started or read, counted then): no hit is counted, the
     * policy is not told, and its bytes go unchecked only while they provably are those the fetch wrote
     * ({@link BlockCheck#trustedAsFetched}): a reader that comes back after a page left the page cache has the
     * block checked first. Its bytes count as from the cache when {@code fromCache} (not those of the reader's
     * own run: counted as from upstream).
     */
    BlockSource source(BlockId id, boolean access, boolean fromCache, long from, long length) {
        BlockEntry e = blockIndex.pinForRead(id, access);
        if (e == null) {
            return null;
        }
        OpenFiles.Handle file = null;
        try {
            file = openFiles.acquire(e.path);
            if (!(access ? check.trusted(e, file, from, length) : check.trustedAsFetched(e, file, from, length))) {
                if (check.mode() == VerifyMode.ALWAYS) {
                    byte[] data = check.readChecked(e);
                    file.release();
                    blockIndex.unpin(e);
                    if (access) {
                        counters.hits.increment();
                    }
                    return new BlockSource.InMemory(served(e, access, fromCache), data, 0);
                }
                check.check(e, file);
            }
            if (access) {
                counters.hits.increment();
            }
            return new BlockSource.InFile(blockIndex, e, file, served(e, access, fromCache));
        } catch (IOException bad) {
            LOG.warn("dropping cached block {} of {}: {}", e.path, id.key(), bad.getMessage());
            if (file != null) {
                file.release();
            }
            blockIndex.dropCorrupt(e);
            return null;
        }
    }

    /**
     * How a read of resident {@code e} is told to the ledger: an access of its own found it resident since it arrived;
     * a read that is not ({@code access} false: its block came from a fetch this reader started or read) waited.
     */
    private BlockSource.Served served(BlockEntry e, boolean access, boolean fromCache) {
        return new BlockSource.Served(counters, e.id, access ? e.arrivedNanos : TierLedger.WAITED, fromCache);
    }

    /**
     * {@code range} of {@code meta} as regions of block files in order (each releases the channel it opened), when every block it
     * touches is resident and its bytes may leave as they are on disk; null otherwise. A block {@link BlockCheck}
     * does not trust is checked here first when {@code mayCheck} (reading it whole: the caller may block on the
     * disk), and makes this null when not; one that fails its check is dropped, and this is null. Counts as hits.
     * Channels are opened while the blocks are pinned: eviction afterwards deletes the file's name, not the bytes
     * an open channel reads.
     */
    List<FileRegionReadable.Region> regions(ObjectMeta meta, ByteRange range, boolean mayCheck) throws IOException {
        long firstIndex = range.offset() / config.blockSize();
        long lastIndex = (range.end() - 1) / config.blockSize();
        List<BlockId> ids = new ArrayList<>();
        for (long i = firstIndex; i <= lastIndex; i++) {
            ids.add(new BlockId(meta.key(), meta.etag(), i));
        }
        List<BlockEntry> pinned = blockIndex.pinAll(ids);
        if (pinned == null) {
            return null;
        }
        List<FileRegionReadable.Region> regions = new ArrayList<>(pinned.size());
        List<FileChannel> channels = new ArrayList<>(pinned.size());
        long[] bytes = new long[pinned.size()]; // this read's bytes of each block, for the ledger
        BlockEntry checking = null;
        try {
            for (int i = 0; i < pinned.size(); i++) {
                BlockEntry e = pinned.get(i);
                long blockStart = e.id.index() * config.blockSize();
                long from = Math.max(range.offset(), blockStart);
                long to = Math.min(range.end(), blockStart + e.dataLength);
                bytes[i] = to - from;
                if (!trusted(e, from - blockStart, to - from)) {
                    if (!mayCheck) {
                        closeAll(channels);
                        blockIndex.unpinAll(pinned);
                        return null;
                    }
                    checking = e;
                    check.check(e);
                    checking = null;
                }
                FileChannel ch = FileChannel.open(e.path, StandardOpenOption.READ);
                channels.add(ch);
                regions.add(new FileRegionReadable.Region(ch, e.headerLength + from - blockStart, to - from, () -> closeQuietly(ch)));
                if (ch.size() < e.headerLength + (long) e.dataLength) {
                    throw new BlockFile.CorruptBlockException(e.path + ": ends early");
                }
            }
        } catch (IOException | RuntimeException bad) {
            closeAll(channels);
            if (checking != null) {
                LOG.warn("dropping cached block {} of {}: {}", checking.path, meta.key(), bad.getMessage());
                pinned.remove(checking);
                blockIndex.dropCorrupt(checking);
            } else {
                LOG.warn("cannot send cached blocks of {} from disk ({}); reading them instead", meta.key(), bad.getMessage());
            }
            blockIndex.unpinAll(pinned);
            return null;
        }
        blockIndex.unpinAsHits(pinned);
        counters.hits.add(pinned.size());
        counters.bytesFromCache.add(range.length());
        for (int i = 0; i < pinned.size(); i++) {
            counters.served(pinned.get(i).id, bytes[i], pinned.get(i).arrivedNanos, true);
        }
        observer.onRead(meta, firstIndex, lastIndex);
        return regions;
    }

    private boolean trusted(BlockEntry e, long from, long length) throws IOException {
        if (check.mode() != VerifyMode.ON_LOAD) {
            return check.trusted(e, null, from, length); // decided by the entry alone: no file to look at
        }
        OpenFiles.Handle file = openFiles.acquire(e.path);
        try {
            return check.trusted(e, file, from, length);
        } finally {
            file.release();
        }
    }

    private static void closeAll(List<FileChannel> channels) {
        channels.forEach(ResidentBlocks::closeQuietly);
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // read-only channel: nothing to lose
        }
    }
}
