package dev.ferry.cache;

import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How missing blocks come into the local tier: single flight (a block being fetched is a {@link BlockFill} in
 * {@code inflight}; the first to claim it fetches it, everyone else reads its bytes as they arrive), runs
 * (one upstream ranged GET, pinned to the ETag, per run of adjacent admitted misses, each with room reserved in
 * the {@link BlockIndex}), and publishing (a complete block renamed into place, its reservation made
 * readable). Also where a reader finds a resident block ({@link #fromDisk}) and what prefetch drives.
 * {@link BlockStream} is the reader over all this.
 *
 * <p>Thread-safe: {@code inflight} is a concurrent map (claims are {@code putIfAbsent}, releases remove only the
 * fill that was put); the index guards itself; a {@link Run} is its driver's alone; the read observer is
 * volatile.
 */
final class BlockRuns {
    private static final Logger LOG = LoggerFactory.getLogger(BlockRuns.class);

    final CacheConfig config;
    final ObjectStore upstream;
    final BlockIndex blockIndex;
    final CacheCounters counters;
    private final OpenFiles openFiles;
    private final BlockCheck check;
    private final UnsyncedBlocks unsynced;
    private final Path tmpDir;
    private final Consumer<ObjectKey> onVersionChanged;
    private final ConcurrentHashMap<BlockId, BlockFill> inflight = new ConcurrentHashMap<>();
    private volatile CachingStore.ReadObserver readObserver;

    /** {@code onVersionChanged} is told when upstream refuses a fetch pinned to an ETag: the object changed. */
    BlockRuns(CacheConfig config, ObjectStore upstream, BlockIndex blockIndex, CacheCounters counters, OpenFiles openFiles,
            BlockCheck check, UnsyncedBlocks unsynced, Consumer<ObjectKey> onVersionChanged) {
        this.config = config;
        this.upstream = upstream;
        this.blockIndex = blockIndex;
        this.counters = counters;
        this.openFiles = openFiles;
        this.check = check;
        this.unsynced = unsynced;
        this.tmpDir = config.dir().resolve(CachingStore.TMP);
        this.onVersionChanged = onVersionChanged;
    }

    long blockLength(ObjectMeta meta, long index) {
        return Math.min(config.blockSize(), meta.size() - index * config.blockSize());
    }

    void versionChanged(ObjectKey key) {
        onVersionChanged.accept(key);
    }

    /** The fill of a block being fetched, or null. */
    BlockFill inFlight(BlockId id) {
        return inflight.get(id);
    }

    /** True when the block is on disk or being fetched: nothing for a prefetcher to do. */
    boolean residentOrInFlight(BlockId id) {
        return inflight.containsKey(id) || blockIndex.isResident(id);
    }

    CachingStore.ReadObserver observer() {
        return readObserver;
    }

    void observeReads(CachingStore.ReadObserver observer) {
        this.readObserver = observer;
    }

    /**
     * An upstream ranged GET covering a run of missing blocks, each claimed (single flight, a {@link BlockFill}
     * in {@code inflight}) and with room reserved in the cache. Its driver starts the blocks in order and pulls
     * their bytes as it needs them; readers of the block being filled get the bytes as they arrive.
     * Not thread-safe: its driver's.
     */
    final class Run {
        final ObjectMeta meta;
        final InputStream stream;
        final long last;
        long next;
        final Map<Long, BlockFill> fills;
        final Map<Long, BlockEntry> reservations;
        final boolean prefetch;
        private BlockFill current;
        private BlockEntry currentReservation;

        Run(ObjectMeta meta, InputStream stream, long first, long last, Map<Long, BlockFill> fills,
                Map<Long, BlockEntry> reservations, boolean prefetch) {
            this.prefetch = prefetch;
            this.meta = meta;
            this.stream = stream;
            this.next = first;
            this.last = last;
            this.fills = fills;
            this.reservations = reservations;
        }

        /** Starts the run's next block (the one before it must be complete); its bytes come with {@link #pull}. */
        BlockFill startNext() {
            if (current != null) {
                throw new IllegalStateException("block " + current.id.index() + " of " + meta.key() + " is not complete");
            }
            long index = next++;
            current = fills.remove(index);
            currentReservation = reservations.remove(index);
            if (currentReservation != null) {
                try {
                    int headerLength = BlockFile.encodeHeader(current.id, meta.size(), config.blockSize(), current.length(), 0).length;
                    current.keepIn(BlockFile.Pending.create(tmpDir, headerLength));
                } catch (IOException e) {
                    writeFailed(e);
                }
            }
            return current;
        }

        /**
         * Reads from upstream until the current block holds more than {@code offsetInBlock} bytes (all of them
         * with {@code offsetInBlock = length - 1}); when the block is complete, keeps it and hands it over.
         */
        void pull(int offsetInBlock) throws IOException {
            BlockFill fill = current;
            if (fill == null) {
                return;
            }
            try {
                while (fill.filled() <= offsetInBlock) {
                    if (fill.pullFrom(stream, this::writeFailed) < 0) {
                        throw new StoreException(StoreException.Kind.RETRYABLE, 0, "upstream sent " + fill.filled() + " of "
                                + fill.length() + " bytes of block " + fill.id.index() + " of " + meta.key(), null);
                    }
                }
            } catch (IOException | RuntimeException e) {
                current = null;
                fill.fail(e instanceof IOException io ? io : new IOException(e));
                if (currentReservation != null) {
                    blockIndex.releaseReservation(currentReservation);
                    currentReservation = null;
                }
                inflight.remove(fill.id, fill);
                throw e;
            }
            if (fill.isComplete()) {
                current = null;
                if (prefetch) {
                    counters.prefetchedBlocks.increment();
                    counters.prefetchedBytes.add(fill.length());
                } else {
                    counters.misses.increment();
                    counters.bytesFromUpstream.add(fill.length());
                }
                BlockEntry reserved = currentReservation;
                currentReservation = null;
                if (reserved != null) {
                    publish(reserved, meta, fill);
                }
                inflight.remove(fill.id, fill);
            }
        }

        /** Pulls the rest of the current block, if one is being filled: it is complete for its waiters and the cache. */
        void finishCurrent() throws IOException {
            if (current != null) {
                pull(current.length() - 1);
            }
        }

        private void writeFailed(IOException failure) {
            counters.writeFailed(failure);
            if (currentReservation != null) {
                blockIndex.releaseReservation(currentReservation);
                currentReservation = null;
            }
        }

        boolean done() {
            return next > last && current == null;
        }

        /** Stops the run: the block being filled and those not started are abandoned (their waiters fetch again). */
        void abandon() {
            if (current != null) {
                current.abandon();
                inflight.remove(current.id, current);
                current = null;
            }
            if (currentReservation != null) {
                blockIndex.releaseReservation(currentReservation);
                currentReservation = null;
            }
            for (BlockFill f : fills.values()) {
                f.abandon();
                inflight.remove(f.id, f);
            }
            fills.clear();
            reservations.values().forEach(blockIndex::releaseReservation);
            reservations.clear();
            try {
                stream.close();
            } catch (IOException ignored) {
                // abandoning: nothing more to read
            }
        }
    }

    /** What came of trying to start a run at a block. */
    record Claim(Outcome outcome, Run run) {
        enum Outcome { STARTED, TAKEN, REFUSED }

        static final Claim TAKEN = new Claim(Outcome.TAKEN, null);
        static final Claim REFUSED = new Claim(Outcome.REFUSED, null);
    }

    /**
     * A miss at {@code index}: claims it (single flight); when the policy admits it, reserves room and opens
     * one ranged GET for it and the admitted missing blocks after it, up to {@code lastIndex} (a run, read
     * block by block). TAKEN when another reader holds the block or it became resident; REFUSED when the
     * policy will not keep it (nothing is claimed then).
     */
    Claim claimRun(ObjectMeta meta, long index, long lastIndex, boolean prefetch) throws IOException {
        BlockId firstId = new BlockId(meta.key(), meta.etag(), index);
        BlockFill first = new BlockFill(firstId, (int) blockLength(meta, index));
        if (inflight.putIfAbsent(firstId, first) != null) {
            return Claim.TAKEN; // someone else claimed it a moment ago
        }
        if (blockIndex.isResident(firstId)) { // its fetcher finished between our look at the disk and the claim
            first.abandon();
            inflight.remove(firstId, first);
            return Claim.TAKEN;
        }
        BlockEntry firstReservation = blockIndex.reserve(firstId, blockLength(meta, index), prefetch);
        if (firstReservation == null) {
            first.abandon(); // waiters decide for themselves
            inflight.remove(firstId, first);
            return Claim.REFUSED;
        }
        Map<Long, BlockFill> claimed = new HashMap<>();
        Map<Long, BlockEntry> reservations = new HashMap<>();
        claimed.put(index, first);
        reservations.put(index, firstReservation);
        long last = index;
        while (last < lastIndex && claimed.size() < config.maxRunBlocks()) {
            BlockId next = new BlockId(meta.key(), meta.etag(), last + 1);
            if (blockIndex.isResident(next)) {
                break;
            }
            BlockFill f = new BlockFill(next, (int) blockLength(meta, last + 1));
            if (inflight.putIfAbsent(next, f) != null) {
                break;
            }
            BlockEntry reserved = blockIndex.reserve(next, blockLength(meta, last + 1), prefetch);
            if (reserved == null) {
                f.abandon();
                inflight.remove(next, f);
                break; // refused: the reader fetches just what it needs of it when it gets there
            }
            claimed.put(last + 1, f);
            reservations.put(last + 1, reserved);
            last++;
        }
        long start = index * config.blockSize();
        long length = (last - index) * config.blockSize() + blockLength(meta, last);
        try {
            counters.upstreamRequests.increment();
            ObjectContent content = upstream.get(new GetRequest(meta.key(), ByteRange.of(start, length), meta.etag()));
            return new Claim(Claim.Outcome.STARTED, new Run(meta, content.stream(), index, last, claimed, reservations, prefetch));
        } catch (IOException | RuntimeException e) {
            if (e instanceof StoreException se && se.kind() == StoreException.Kind.PRECONDITION_FAILED) {
                versionChanged(meta.key()); // the object changed under us: ask again next time
            }
            for (BlockFill f : claimed.values()) {
                f.fail(e instanceof IOException io ? io : new IOException(e));
                inflight.remove(f.id, f);
            }
            reservations.values().forEach(blockIndex::releaseReservation);
            throw e;
        }
    }

    /**
     * Fetches the blocks of {@code range} that are neither resident nor being fetched, kept when the policy
     * admits them (refused blocks are skipped, never fetched); see {@link CachingStore#prefetch}. Returns the
     * bytes fetched.
     */
    long prefetch(ObjectMeta meta, ByteRange range) throws IOException {
        long last = (range.end() - 1) / config.blockSize();
        long fetched = 0;
        for (long index = range.offset() / config.blockSize(); index <= last; ) {
            BlockId id = new BlockId(meta.key(), meta.etag(), index);
            if (blockIndex.isResident(id) || inflight.containsKey(id)) {
                index++;
                continue;
            }
            Claim claim = claimRun(meta, index, last, true);
            if (claim.outcome() != Claim.Outcome.STARTED) {
                index++;
                continue;
            }
            Run run = claim.run();
            try {
                while (!run.done()) {
                    BlockFill fill = run.startNext();
                    run.pull(fill.length() - 1);
                    fetched += fill.length();
                }
                run.stream.close();
            } catch (IOException | RuntimeException e) {
                run.abandon();
                throw e;
            }
            index = run.last + 1;
        }
        return fetched;
    }

    /**
     * A pinned source over a resident block for a read of {@code length} bytes of its data from {@code from},
     * or null when it is not (or no longer) usable. The block is checked first unless {@link BlockCheck} trusts
     * it; a checked block is served from the copy that was checked. One that fails is dropped (the reader
     * fetches it again).
     */
    BlockStream.Source fromDisk(BlockId id, long from, long length) {
        BlockEntry e = blockIndex.pinForRead(id);
        if (e == null) {
            return null;
        }
        OpenFiles.Handle file = null;
        try {
            file = openFiles.acquire(e.path);
            if (!check.trusted(e, file, from, length)) {
                byte[] data = check.readChecked(e);
                file.release();
                blockIndex.unpin(e);
                counters.hits.increment();
                return new BlockStream.MemorySource(counters, data, true);
            }
            counters.hits.increment();
            return new BlockStream.FileSource(blockIndex, counters, e, file);
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
     * Puts a complete block in place (header, rename; no fsync: see the note on durability) and makes its
     * reservation readable; the disk refusing (full, failing) costs only the keeping, never the read.
     */
    private void publish(BlockEntry reserved, ObjectMeta meta, BlockFill fill) {
        BlockFile.Pending file = fill.file();
        if (file == null) {
            blockIndex.releaseReservation(reserved); // the disk refused its bytes on the way
            return;
        }
        BlockId id = reserved.id;
        int crc = fill.crc();
        int headerLength;
        try {
            byte[] header = BlockFile.encodeHeader(id, meta.size(), config.blockSize(), fill.length(), crc);
            headerLength = header.length;
            file.commit(header, reserved.path, false);
        } catch (IOException failure) {
            counters.writeFailed(failure);
            blockIndex.releaseReservation(reserved);
            return;
        }
        unsynced.add(reserved.path);
        BlockEntry ready = new BlockEntry(id, reserved.path, meta.size(), fill.length(), headerLength, crc, false);
        ready.verified = true; // written from the bytes the upstream just sent
        ready.ready = true;
        blockIndex.publish(reserved, ready);
    }
}
