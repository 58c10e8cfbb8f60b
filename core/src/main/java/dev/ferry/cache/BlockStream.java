package dev.ferry.cache;

import dev.ferry.store.BlockReadingInputStream;
import dev.ferry.store.ByteRange;
import dev.ferry.store.FileRegionReadable;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * One reader's range of an object, read block by block: each block from its {@link BlockSource}, which is a
 * resident block on disk (pinned while read, and checked first as {@link BlockCheck} says: {@link ResidentBlocks}),
 * a block being fetched (its bytes as they arrive in its file: by another reader's run, or by this reader's own
 * run, which is fetched on a thread of its own whatever the reader does; see {@link BlockFetcher.Run}), or, for a
 * block the policy refuses, the bytes this read needs fetched into a temporary file of its own without a name and
 * kept nowhere ({@link BypassReads}). A reader that leaves lets its run finish the block under way and abandon the
 * rest.
 *
 * <p>The bytes can be read ({@link #read}) or, where they are in a file, handed over as regions of it
 * ({@link #nextRegion}), for a server to send file-to-socket.
 *
 * <p>Not thread-safe: one reader's, like any {@link java.io.InputStream}; what it shares with other readers
 * (the index, blocks in flight) is guarded where it lives ({@link BlockIndex}, {@link BlockFetcher}, {@link BlockFill}).
 */
final class BlockStream extends BlockReadingInputStream implements FileRegionReadable {
    /** What every reader of one cache reads its blocks through. */
    record Parts(CacheConfig config, CacheCounters counters, BlockIndex index, BlockFetcher fetcher, ResidentBlocks resident,
            BypassReads bypass, ReadObserver observer, Map<ObjectKey, CompletableFuture<Void>> wholePrefetches) {
    }

    private final CacheConfig config;
    private final CacheCounters counters;
    private final BlockIndex blockIndex;
    private final BlockFetcher fetcher;
    private final ResidentBlocks resident;
    private final BypassReads bypass;
    private final ReadObserver observer;
    /** Keys whose whole object is being prefetched by one GET not answered yet ({@link ColdReads#prefetch}). */
    private final Map<ObjectKey, CompletableFuture<Void>> wholePrefetches;
    private final ObjectMeta meta;
    private final long end;
    private final long lastIndex;
    private long position;
    private long currentIndex = -1;
    private BlockSource current;
    private BlockFetcher.Run run;
    private boolean streamClosed;

    BlockStream(Parts parts, ObjectMeta meta, ByteRange range) {
        this(parts, meta, range, null);
    }

    /** ... whose first blocks come from {@code run}, started already (a miss read with no HEAD before it), when not null. */
    BlockStream(Parts parts, ObjectMeta meta, ByteRange range, BlockFetcher.Run run) {
        this(parts, meta, range, run, null);
    }

    /** ... or whose first block's bytes are {@code first} (a refused block's, fetched already), when not null. */
    BlockStream(Parts parts, ObjectMeta meta, ByteRange range, BlockFetcher.Run run, BlockSource first) {
        this.config = parts.config();
        this.counters = parts.counters();
        this.blockIndex = parts.index();
        this.fetcher = parts.fetcher();
        this.resident = parts.resident();
        this.bypass = parts.bypass();
        this.observer = parts.observer();
        this.wholePrefetches = parts.wholePrefetches();
        this.run = run;
        this.current = first;
        this.currentIndex = first == null ? -1 : range.offset() / config.blockSize();
        this.meta = meta;
        this.position = range.offset();
        this.end = range.end();
        this.lastIndex = (end - 1) / config.blockSize();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (streamClosed) {
            throw new IOException("stream closed");
        }
        if (len == 0) {
            return 0; // InputStream's contract: nothing asked, nothing read, even at the end
        }
        if (!ready()) {
            return -1;
        }
        while (true) {
            long offsetInBlock = position - currentIndex * config.blockSize();
            try {
                int n = current.read(b, off, (int) Math.min(len, rest()), offsetInBlock);
                position += n;
                return n;
            } catch (BlockFill.Abandoned abandoned) {
                startAgain();
            } catch (BlockFill.InPlace inPlace) {
                readInPlace();
            }
        }
    }

    /** {@inheritDoc} Null too where the block's bytes are in memory (checked under verify: always, or refused by the disk). */
    @Override
    public Region nextRegion(int maxBytes) throws IOException {
        if (maxBytes <= 0) {
            throw new IllegalArgumentException("maxBytes must be positive: " + maxBytes);
        }
        if (!ready()) {
            return null;
        }
        while (true) {
            long offsetInBlock = position - currentIndex * config.blockSize();
            try {
                Region r = current.region((int) Math.min(maxBytes, rest()), offsetInBlock);
                if (r != null) {
                    position += r.length();
                }
                return r;
            } catch (BlockFill.Abandoned abandoned) {
                startAgain();
            } catch (BlockFill.InPlace inPlace) {
                readInPlace();
            }
        }
    }

    /** True when there are bytes left, with {@code current} the source of the block at {@code position}. */
    private boolean ready() throws IOException {
        if (streamClosed) {
            throw new IOException("stream closed");
        }
        if (position >= end) {
            return false;
        }
        long index = position / config.blockSize();
        if (index != currentIndex || current == null) {
            if (current != null) {
                current.release();
                current = null;
            }
            current = acquire(index);
            currentIndex = index;
        }
        return true;
    }

    /** Bytes left in the current block, within the range. */
    private long rest() {
        return Math.min(end, currentIndex * config.blockSize() + fetcher.blockLength(meta, currentIndex)) - position;
    }

    /** The fetch of the current block stopped early: find it again (on disk, fetched by another, or fetch it). */
    private void startAgain() throws IOException {
        if (current != null) {
            current.release();
            current = null;
        }
        if (run != null && run.fill(currentIndex) != null) {
            run.leave(); // it stopped: its blocks from here on are fetched anew
            run = null;
        }
        current = acquire(currentIndex);
        if (position > currentIndex * config.blockSize()) {
            current.continuesRead(); // the read of this block began before: it is not a new one
        }
    }

    /**
     * The fetch of the current block put it in place while it was read: the rest of it comes from its file, as a
     * resident block's (counted already, as its run's miss or a hit on another's fetch), or anew when it is gone.
     */
    private void readInPlace() throws IOException {
        boolean own = ((BlockSource.Fill) current).own; // only a fill is put in place
        current.release();
        current = fromDisk(new BlockId(meta.key(), meta.etag(), currentIndex), false, !own);
        if (current == null) {
            startAgain();
        } else {
            current.continuesRead();
        }
    }

    private BlockSource acquire(long index) throws IOException {
        BlockId id = new BlockId(meta.key(), meta.etag(), index);
        observer.onRead(meta, index, index);
        while (true) {
            if (run != null) {
                BlockFill own = run.fill(index);
                if (own != null) {
                    if (own.attach()) {
                        return new BlockSource.Fill(counters, own, true);
                    }
                    IOException failed = own.failure();
                    if (failed != null) {
                        throw failed; // the run failed at this block before the reader came: so does the read
                    }
                    BlockSource kept = fromDisk(id, false, false); // fetched and let go before the reader came: read back from disk
                    if (kept != null) {
                        return kept;
                    }
                }
                run.leave(); // past its end, or its block is gone (failed, evicted): fetch anew from here
                run = null;
            }
            BlockSource cached = fromDisk(id, true, true);
            if (cached != null) {
                return cached;
            }
            BlockFill pending = fetcher.inFlight(id);
            if (pending != null) {
                if (pending.attach()) {
                    counters.hits.increment();
                    blockIndex.onHit(id); // an access like any other: plan-aware policies must see it
                    return new BlockSource.Fill(counters, pending, false); // its bytes as they arrive; read() starts again if it is abandoned
                }
                Thread.onSpinWait(); // finished a moment ago: on disk, or about to leave inflight
                continue;
            }
            CompletableFuture<Void> prefetching = wholePrefetches.get(meta.key());
            if (prefetching != null) {
                prefetching.join(); // its bytes are on their way: read them rather than GET them a second time
                continue;
            }
            BlockFetcher.Claim claim = fetcher.claimRun(meta, index, lastIndex, false);
            if (claim.outcome() == BlockFetcher.Claim.Outcome.REFUSED) {
                return bypass(index);
            }
            if (claim.outcome() == BlockFetcher.Claim.Outcome.STARTED) {
                run = claim.run();
                fetcher.start(run);
                observer.onMiss(meta, index);
            }
        }
    }

    /** The resident block {@code id} for the rest of this read's bytes of it; see {@link ResidentBlocks#source}. */
    private BlockSource fromDisk(BlockId id, boolean access, boolean fromCache) {
        long blockStart = id.index() * config.blockSize();
        long from = Math.max(position, blockStart) - blockStart;
        return resident.source(id, access, fromCache, from, Math.min(end - blockStart, fetcher.blockLength(meta, id.index())) - from);
    }

    /** A refused block: fetch only the part of it this read still needs, keep nothing. */
    private BlockSource bypass(long index) throws IOException {
        long blockStart = index * config.blockSize();
        long from = Math.max(position, blockStart);
        long to = Math.min(end, blockStart + fetcher.blockLength(meta, index));
        return bypass.fetch(meta, from, to, blockStart);
    }

    @Override
    public void close() {
        if (streamClosed) {
            return;
        }
        streamClosed = true;
        if (current != null) {
            current.release();
            current = null;
        }
        if (run != null) {
            run.leave(); // the block under way is finished for its other readers and the cache, the rest abandoned
            run = null;
        }
    }
}
