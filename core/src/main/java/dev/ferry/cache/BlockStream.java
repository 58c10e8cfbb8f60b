package dev.ferry.cache;

import dev.ferry.store.BlockReadingInputStream;
import dev.ferry.store.ByteRange;
import dev.ferry.store.Bytes;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One reader's range of an object, read block by block: each block from its {@link Source}, which is a resident
 * block on disk (pinned while read), a block another reader is fetching (its bytes as they arrive), a block of a
 * run this reader fetches itself ({@link BlockRuns.Run}: it pulls the bytes it needs and its waiters get them
 * too), or, for a block the policy refuses, the bytes this read needs fetched and kept nowhere. A reader that
 * leaves finishes the block under way for its waiters and the cache and abandons the rest of its run.
 *
 * <p>Not thread-safe: one reader's, like any {@link java.io.InputStream}; what it shares with other readers
 * (the index, blocks in flight) is guarded where it lives ({@link BlockIndex}, {@link BlockRuns}).
 */
final class BlockStream extends BlockReadingInputStream {
    private static final Logger LOG = LoggerFactory.getLogger(BlockStream.class);

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
        if (streamClosed) {
            throw new IOException("stream closed");
        }
        if (position >= end) {
            return -1;
        }
        if (len == 0) {
            return 0;
        }
        long index = position / config.blockSize();
        if (index != currentIndex) {
            if (current != null) {
                current.release();
                current = null;
            }
            current = acquire(index);
            currentIndex = index;
        }
        long blockStart = index * config.blockSize();
        int want = (int) Math.min(len, Math.min(end - position, blockStart + runs.blockLength(meta, index) - position));
        int n;
        try {
            n = current.read(b, off, want, position - blockStart);
        } catch (BlockFill.Abandoned abandoned) {
            current.release(); // the reader fetching it left early: fetch it (or wait for another) again
            current = null;
            currentIndex = -1;
            return read(b, off, len);
        }
        position += n;
        return n;
    }

    private Source acquire(long index) throws IOException {
        BlockId id = new BlockId(meta.key(), meta.etag(), index);
        CachingStore.ReadObserver observer = runs.observer();
        if (observer != null) {
            observer.onRead(meta, index, index);
        }
        while (true) {
            if (run != null) {
                run.finishCurrent();
                if (!run.done() && run.next == index) {
                    return new FillSource(counters, run.startNext(), run);
                }
                if (run.done()) {
                    run.stream.close();
                } else {
                    run.abandon();
                }
                run = null;
            }
            long blockStart = index * config.blockSize();
            long from = Math.max(position, blockStart) - blockStart;
            Source cached = runs.fromDisk(id, from, Math.min(end - blockStart, runs.blockLength(meta, index)) - from);
            if (cached != null) {
                return cached;
            }
            BlockFill pending = runs.inFlight(id);
            if (pending != null) {
                counters.hits.increment();
                runs.blockIndex.onHit(id); // an access like any other: plan-aware policies must see it
                return new FillSource(counters, pending, null); // its bytes as they arrive; read() starts again if it is abandoned
            }
            Source started = startRun(index);
            if (started != null) {
                return started;
            }
        }
    }

    /**
     * A miss: claims {@code index}; when the policy admits it, reserves room and opens one ranged GET for it
     * and the admitted missing blocks after it (a run, read as the reader advances); when it refuses,
     * fetches only the bytes this read needs from that block, and keeps nothing. Null when another reader
     * claimed the block first.
     */
    private Source startRun(long index) throws IOException {
        BlockRuns.Claim claim = runs.claimRun(meta, index, lastIndex, false);
        if (claim.outcome() == BlockRuns.Claim.Outcome.TAKEN) {
            return null;
        }
        if (claim.outcome() == BlockRuns.Claim.Outcome.REFUSED) {
            return bypass(index);
        }
        run = claim.run();
        return new FillSource(counters, run.startNext(), run);
    }

    /** A refused block: fetch only the part of it this read still needs, keep nothing. */
    private Source bypass(long index) throws IOException {
        long blockStart = index * config.blockSize();
        long from = Math.max(position, blockStart);
        long to = Math.min(end, blockStart + runs.blockLength(meta, index));
        counters.upstreamRequests.increment();
        byte[] data;
        try (ObjectContent c = runs.upstream.get(new GetRequest(meta.key(), ByteRange.of(from, to - from), meta.etag()))) {
            data = Bytes.read(c.stream(), (int) (to - from));
        } catch (StoreException e) {
            if (e.kind() == StoreException.Kind.PRECONDITION_FAILED) {
                runs.versionChanged(meta.key());
            }
            throw e;
        }
        if (data.length != to - from) {
            throw new StoreException(StoreException.Kind.RETRYABLE, 0, "upstream sent " + data.length + " of "
                    + (to - from) + " bytes of " + meta.key() + " at " + from, null);
        }
        counters.misses.increment();
        counters.bytesFromUpstream.add(data.length);
        return new MemorySource(counters, data, false, from - blockStart);
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
            try {
                run.finishCurrent(); // the block under way is finished for its waiters and the cache
            } catch (IOException | RuntimeException e) {
                LOG.debug("could not finish block of {} after its reader left: {}", meta.key(), e.toString());
            }
            if (run.done()) {
                try {
                    run.stream.close();
                } catch (IOException ignored) {
                    // read to the end
                }
            } else {
                run.abandon();
            }
            run = null;
        }
    }

    /** Where a block's bytes come from for one reader. */
    interface Source {
        int read(byte[] b, int off, int len, long offsetInBlock) throws IOException;

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
        public void release() {
        }
    }

    static final class FileSource implements Source {
        private final BlockIndex blockIndex;
        private final CacheCounters counters;
        private final BlockEntry entry;
        private final OpenFiles.Handle file;

        /** {@code entry} is pinned; {@link #release} unpins it. */
        FileSource(BlockIndex blockIndex, CacheCounters counters, BlockEntry entry, OpenFiles.Handle file) {
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
            counters.bytesFromCache.add(want);
            return want;
        }

        @Override
        public void release() {
            file.release();
            blockIndex.unpin(entry);
        }
    }

    /** A block being filled, for one reader: the driver pulls what it needs, anyone else waits for it. */
    static final class FillSource implements Source {
        private final CacheCounters counters;
        private final BlockFill fill;
        private final BlockRuns.Run driver;

        FillSource(CacheCounters counters, BlockFill fill, BlockRuns.Run driver) {
            this.counters = counters;
            this.fill = fill;
            this.driver = driver;
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) throws IOException {
            if (driver != null) {
                driver.pull((int) offsetInBlock);
            }
            int n = fill.read(b, off, len, (int) offsetInBlock);
            if (driver == null) {
                counters.bytesFromCache.add(n); // another reader's fetch: a hit, like a resident block
            }
            return n;
        }

        @Override
        public void release() {
        }
    }
}
