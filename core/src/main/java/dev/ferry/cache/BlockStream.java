package dev.ferry.cache;

import dev.ferry.store.BlockReadingInputStream;
import dev.ferry.store.ByteRange;
import dev.ferry.store.FileRegionReadable;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * One reader's range of an object, read block by block: each block from its {@link Source}, which is a resident
 * block on disk (pinned while read, and checked first as {@link BlockCheck} says), a block being fetched (its
 * bytes as they arrive in its file: by another reader's run, or by this reader's own run, which is fetched on a
 * thread of its own whatever the reader does; see {@link BlockRuns.Run}), or, for a block the policy refuses, the
 * bytes this read needs fetched into a temporary file of its own without a name and kept nowhere. A reader that
 * leaves lets its run finish the block under way and abandon the rest.
 *
 * <p>The bytes can be read ({@link #read}) or, where they are in a file, handed over as regions of it
 * ({@link #nextRegion}), for a server to send file-to-socket.
 *
 * <p>Not thread-safe: one reader's, like any {@link java.io.InputStream}; what it shares with other readers
 * (the index, blocks in flight) is guarded where it lives ({@link BlockIndex}, {@link BlockRuns}, {@link BlockFill}).
 */
final class BlockStream extends BlockReadingInputStream implements FileRegionReadable {
    private final BlockRuns runs;
    private final CacheConfig config;
    private final CacheCounters counters;
    private final ObjectMeta meta;
    private final long end;
    private final long lastIndex;
    private long position;
    private long currentIndex = -1;
    private Source current;
    private BlockRuns.Run run;
    private boolean streamClosed;

    BlockStream(BlockRuns runs, ObjectMeta meta, ByteRange range) {
        this(runs, meta, range, null);
    }

    /** ... whose first blocks come from {@code run}, started already (a miss read with no HEAD before it), when not null. */
    BlockStream(BlockRuns runs, ObjectMeta meta, ByteRange range, BlockRuns.Run run) {
        this(runs, meta, range, run, null);
    }

    /** ... or whose first block's bytes are {@code first} (a refused block's, fetched already), when not null. */
    BlockStream(BlockRuns runs, ObjectMeta meta, ByteRange range, BlockRuns.Run run, Source first) {
        this.run = run;
        this.current = first;
        this.currentIndex = first == null ? -1 : range.offset() / runs.config.blockSize();
        this.runs = runs;
        this.config = runs.config;
        this.counters = runs.counters;
        this.meta = meta;
        this.position = range.offset();
        this.end = range.end();
        this.lastIndex = (end - 1) / config.blockSize();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (!ready() || len == 0) {
            return position >= end ? -1 : 0;
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
        return Math.min(end, currentIndex * config.blockSize() + runs.blockLength(meta, currentIndex)) - position;
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
    }

    /**
     * The fetch of the current block put it in place while it was read: the rest of it comes from its file, as a
     * resident block's (counted already, as its run's miss or a hit on another's fetch), or anew when it is gone.
     */
    private void readInPlace() throws IOException {
        boolean own = ((FillSource) current).own; // only a fill is put in place
        current.release();
        current = fromDisk(new BlockId(meta.key(), meta.etag(), currentIndex), false, !own);
        if (current == null) {
            startAgain();
        }
    }

    private Source acquire(long index) throws IOException {
        BlockId id = new BlockId(meta.key(), meta.etag(), index);
        CachingStore.ReadObserver observer = runs.observer();
        if (observer != null) {
            observer.onRead(meta, index, index);
        }
        while (true) {
            if (run != null) {
                BlockFill own = run.fill(index);
                if (own != null) {
                    if (own.attach()) {
                        return new FillSource(counters, own, true);
                    }
                    IOException failed = own.failure();
                    if (failed != null) {
                        throw failed; // the run failed at this block before the reader came: so does the read
                    }
                    Source kept = fromDisk(id, false, false); // fetched and let go before the reader came: read back from disk
                    if (kept != null) {
                        return kept;
                    }
                }
                run.leave(); // past its end, or its block is gone (failed, evicted): fetch anew from here
                run = null;
            }
            Source cached = fromDisk(id, true, true);
            if (cached != null) {
                return cached;
            }
            BlockFill pending = runs.inFlight(id);
            if (pending != null) {
                if (pending.attach()) {
                    counters.hits.increment();
                    runs.blockIndex.onHit(id); // an access like any other: plan-aware policies must see it
                    return new FillSource(counters, pending, false); // its bytes as they arrive; read() starts again if it is abandoned
                }
                Thread.onSpinWait(); // finished a moment ago: on disk, or about to leave inflight
                continue;
            }
            BlockRuns.Claim claim = runs.claimRun(meta, index, lastIndex, false);
            if (claim.outcome() == BlockRuns.Claim.Outcome.REFUSED) {
                return bypass(index);
            }
            if (claim.outcome() == BlockRuns.Claim.Outcome.STARTED) {
                run = claim.run();
                runs.start(run);
            }
        }
    }

    /** The resident block {@code id} for the rest of this read's bytes of it; see {@link BlockRuns#fromDisk}. */
    private Source fromDisk(BlockId id, boolean access, boolean fromCache) {
        long blockStart = id.index() * config.blockSize();
        long from = Math.max(position, blockStart) - blockStart;
        return runs.fromDisk(id, access, fromCache, from, Math.min(end - blockStart, runs.blockLength(meta, id.index())) - from);
    }

    /** A refused block: fetch only the part of it this read still needs, keep nothing. */
    private Source bypass(long index) throws IOException {
        long blockStart = index * config.blockSize();
        long from = Math.max(position, blockStart);
        long to = Math.min(end, blockStart + runs.blockLength(meta, index));
        return runs.fetchUnkept(meta, from, to, blockStart);
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

    /** Where a block's bytes come from for one reader. */
    interface Source {
        int read(byte[] b, int off, int len, long offsetInBlock) throws IOException;

        /** Up to {@code maxBytes} from {@code offsetInBlock} as a region of a file; null when they are not in one. */
        Region region(int maxBytes, long offsetInBlock) throws IOException;

        void release();
    }

    static final class MemorySource implements Source {
        private final CacheCounters counters;
        private final byte[] data;
        private final boolean fromCache;
        private final long base;

        MemorySource(CacheCounters counters, byte[] data, boolean fromCache) {
            this(counters, data, fromCache, 0);
        }

        /** {@code data} holds the block's bytes from {@code base} on (all of them when 0). */
        MemorySource(CacheCounters counters, byte[] data, boolean fromCache, long base) {
            this.counters = counters;
            this.data = data;
            this.fromCache = fromCache;
            this.base = base;
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) {
            int at = (int) (offsetInBlock - base);
            int n = Math.min(len, data.length - at);
            System.arraycopy(data, at, b, off, n);
            if (fromCache) {
                counters.bytesFromCache.add(n);
            }
            return n;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) {
            return null;
        }

        @Override
        public void release() {
        }
    }

    static final class FileSource implements Source {
        private final BlockIndex blockIndex;
        private final CacheCounters counters;
        private final BlockEntry entry;
        private final OpenFiles.Handle file;
        private final boolean fromCache;

        /**
         * {@code entry} is pinned; {@link #release} unpins it. Its bytes count as from the cache when {@code fromCache}
         * (not for a block of the reader's own run: counted as from upstream already).
         */
        FileSource(BlockIndex blockIndex, CacheCounters counters, BlockEntry entry, OpenFiles.Handle file, boolean fromCache) {
            this.fromCache = fromCache;
            this.blockIndex = blockIndex;
            this.counters = counters;
            this.entry = entry;
            this.file = file;
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) throws IOException {
            int want = (int) Math.min(len, entry.dataLength - offsetInBlock);
            ByteBuffer buf = ByteBuffer.wrap(b, off, want);
            while (buf.hasRemaining()) {
                int n = file.channel.read(buf, entry.headerLength + offsetInBlock + (buf.position() - off));
                if (n < 0) {
                    throw new BlockFile.CorruptBlockException(entry.path + ": ends early");
                }
            }
            if (fromCache) {
                counters.bytesFromCache.add(want);
            }
            return want;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) {
            int want = (int) Math.min(maxBytes, entry.dataLength - offsetInBlock);
            file.retain();
            if (fromCache) {
                counters.bytesFromCache.add(want);
            }
            return new Region(file.channel, entry.headerLength + offsetInBlock, want, file::release);
        }

        @Override
        public void release() {
            file.release();
            blockIndex.unpin(entry);
        }
    }

    /**
     * Bytes of a block the policy refused, in a temporary file of this reader's alone, already deleted (its open
     * channel reads it): a reader that stops reading holds no memory for them. Not counted: a miss, counted when
     * fetched.
     */
    static final class SpillSource implements Source {
        private final SharedChannel file;
        private final long base;
        private final long length;

        /** {@code file} holds the block's bytes from {@code base} on, {@code length} of them, at its start; held once for this source. */
        SpillSource(SharedChannel file, long base, long length) {
            this.file = file;
            this.base = base;
            this.length = length;
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) throws IOException {
            long at = offsetInBlock - base;
            int want = (int) Math.min(len, length - at);
            ByteBuffer buf = ByteBuffer.wrap(b, off, want);
            while (buf.hasRemaining()) {
                if (file.channel.read(buf, at + (buf.position() - off)) < 0) {
                    throw new IOException("a temporary file of the local tier ends early");
                }
            }
            return want;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) {
            long at = offsetInBlock - base;
            if (!file.retain()) {
                throw new IllegalStateException("a region asked of a released source");
            }
            return new Region(file.channel, at, Math.min(maxBytes, length - at), file::release);
        }

        @Override
        public void release() {
            file.release();
        }
    }

    /**
     * A block being fetched, for one reader attached to it: its bytes from the block's file as they arrive. A
     * block of the reader's own run ({@code own}) was counted as a miss by the run; another's is a hit.
     */
    static final class FillSource implements Source {
        private final CacheCounters counters;
        private final BlockFill fill;
        final boolean own;

        /** {@code fill} is attached; {@link #release} detaches it. */
        FillSource(CacheCounters counters, BlockFill fill, boolean own) {
            this.counters = counters;
            this.fill = fill;
            this.own = own;
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) throws IOException {
            int n = fill.read(b, off, len, (int) offsetInBlock);
            if (!own) {
                counters.bytesFromCache.add(n); // another reader's fetch: a hit, like a resident block
            }
            return n;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) throws IOException {
            Region r = fill.region((int) offsetInBlock, maxBytes);
            if (r != null && !own) {
                counters.bytesFromCache.add(r.length());
            }
            return r;
        }

        @Override
        public void release() {
            fill.detach();
        }
    }
}
