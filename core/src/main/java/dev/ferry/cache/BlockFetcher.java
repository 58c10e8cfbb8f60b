package dev.ferry.cache;

import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local tier's single-flight fetcher: how missing blocks come in. A block being fetched is a {@link BlockFill}
 * in {@code inflight}; the first to claim it fetches it, everyone else reads its bytes as they arrive. ColdReads are
 * fetched in runs (one upstream ranged GET, pinned to the ETag, per run of adjacent admitted misses, each with room
 * reserved in the {@link BlockIndex}) and published (a complete block renamed into place, its reservation made
 * readable). Prefetches of a range go through the same claims. {@link BlockStream} is the reader over this;
 * resident blocks leave through {@link ResidentBlocks}, refused ones through {@link BypassReads}.
 *
 * <p>A reader's run is fetched on a thread of its own ({@code fetchers}), into the blocks' files, at the pace of
 * upstream and the disk, never at the reader's: a client that stops reading holds no bytes in memory and
 * stalls neither the fetch nor the other readers of its blocks. A prefetch fetches on its caller's
 * thread.
 *
 * <p>Thread-safe: {@code inflight} is a concurrent map (claims are {@code putIfAbsent}, releases remove only the
 * fill that was put); the index guards itself; a {@link Run} is fetched by one thread and read by its reader;
 * {@code closing} is volatile.
 */
final class BlockFetcher {
    private static final Logger LOG = LoggerFactory.getLogger(BlockFetcher.class);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    private final CacheConfig config;
    private final ObjectStore upstream;
    private final BlockIndex blockIndex;
    private final CacheCounters counters;
    private final BlockCheck check;
    private final UnsyncedBlocks unsynced;
    private final Path tmpDir;
    private final Consumer<ObjectKey> onVersionChanged;
    private final ConcurrentHashMap<BlockId, BlockFill> inflight = new ConcurrentHashMap<>();
    private final Executor fetchers;
    private final Clock clock;
    private volatile boolean closing;
    /** Runs being fetched; also the lock for {@code closing} against a run starting. */
    private final Set<Run> active = new HashSet<>();

    /**
     * A fetcher into {@code layout}'s folder, running readers' runs on {@code fetchers}; {@code onVersionChanged} is
     * told when upstream refuses a fetch pinned to an ETag: the object changed.
     */
    BlockFetcher(CacheConfig config, CacheLayout layout, ObjectStore upstream, BlockIndex blockIndex, CacheCounters counters,
            BlockCheck check, UnsyncedBlocks unsynced, Consumer<ObjectKey> onVersionChanged, Executor fetchers, Clock clock) {
        this.config = config;
        this.upstream = upstream;
        this.blockIndex = blockIndex;
        this.counters = counters;
        this.check = check;
        this.unsynced = unsynced;
        this.tmpDir = layout.tmp();
        this.onVersionChanged = onVersionChanged;
        this.fetchers = fetchers;
        this.clock = clock;
    }

    long blockLength(ObjectMeta meta, long index) {
        return Math.min(config.blockSize(), meta.size() - index * config.blockSize());
    }

    /** The fill of a block being fetched, or null. */
    BlockFill inFlight(BlockId id) {
        return inflight.get(id);
    }

    /** True when the block is on disk or being fetched: nothing for a prefetcher to do. */
    boolean residentOrInFlight(BlockId id) {
        return inflight.containsKey(id) || blockIndex.isResident(id);
    }

    /**
     * An upstream ranged GET covering a run of missing blocks, each claimed (single flight, a {@link BlockFill}
     * in {@code inflight}) and with room reserved in the cache. {@link #fetch} reads it to the end, block by
     * block, into the blocks' files, whatever its reader does; the reader ({@link BlockStream}) and anyone else
     * reading one of its blocks read them there as they arrive. The reader leaving ({@link #leave}) stops the
     * fetch after the block under way.
     *
     * <p>Thread-safe: {@link #fetch} runs on one thread (the fetcher); {@link #fill} and {@link #leave} are for
     * the reader, on another.
     */
    final class Run {
        final ObjectMeta meta;
        final InputStream stream;
        final long first;
        final long last;
        private final Map<Long, BlockFill> fills;
        private final Map<Long, BlockEntry> reservations; // the fetcher's
        final boolean prefetch;
        private volatile boolean readerLeft;

        Run(ObjectMeta meta, InputStream stream, long first, long last, Map<Long, BlockFill> fills,
                Map<Long, BlockEntry> reservations, boolean prefetch) {
            this.prefetch = prefetch;
            this.meta = meta;
            this.stream = stream;
            this.first = first;
            this.last = last;
            this.fills = Map.copyOf(fills);
            this.reservations = reservations;
        }

        /** The run's fill of block {@code index}; null when the run does not cover it. */
        BlockFill fill(long index) {
            return fills.get(index);
        }

        /** The reader is gone: the fetch finishes the block under way (for its other readers and the cache), then stops. */
        void leave() {
            readerLeft = true;
        }

        /**
         * Fetches the run's blocks in order into their files, publishing each once complete, and returns the bytes
         * fetched. A failure fails the block under way (its readers see it) and abandons the rest (their readers
         * fetch again); it is thrown once everything is released. Stops early, abandoning the rest, when the
         * reader left, the cache is closing, or the disk refused a block.
         */
        long fetch() throws IOException {
            synchronized (active) {
                if (closing) {
                    stop(first);
                    throw new IOException("the cache is closing");
                }
                active.add(this);
            }
            try {
                return fetchBlocks();
            } finally {
                synchronized (active) {
                    active.remove(this);
                    active.notifyAll();
                }
            }
        }

        private long fetchBlocks() throws IOException {
            byte[] slice = new byte[BlockFill.SLICE];
            long fetched = 0;
            long index = first;
            BlockFill fill = null;
            BlockEntry[] reserved = new BlockEntry[1];
            try {
                for (; index <= last; index++) {
                    if (index > first && (readerLeft || closing)) {
                        break;
                    }
                    fill = fills.get(index);
                    reserved[0] = reservations.remove(index);
                    BlockFill.WriteFailure writeFailed = failure -> {
                        counters.writeFailed(failure);
                        if (reserved[0] != null) {
                            blockIndex.releaseReservation(reserved[0]);
                            reserved[0] = null;
                        }
                    };
                    BlockFile.Pending pending = null;
                    if (reserved[0] != null) {
                        try {
                            int headerLength = BlockFile.encodeHeader(fill.id, meta.size(), config.blockSize(), fill.length(), 0).length;
                            pending = BlockFile.Pending.create(tmpDir, headerLength);
                        } catch (IOException e) {
                            writeFailed.failed(e);
                        }
                    }
                    fill.start(pending, writeFailed);
                    while (!fill.isComplete()) {
                        if (closing) {
                            throw new IOException("the cache is closing");
                        }
                        if (fill.pullFrom(stream, slice, writeFailed) < 0) {
                            throw new StoreException(StoreException.Kind.RETRYABLE, 0, "upstream sent " + fill.filled() + " of "
                                    + fill.length() + " bytes of block " + index + " of " + meta.key(), null);
                        }
                    }
                    if (prefetch) {
                        counters.prefetchedBlocks.increment();
                        counters.prefetchedBytes.add(fill.length());
                    } else {
                        counters.misses.increment();
                        counters.bytesFromUpstream.add(fill.length());
                    }
                    counters.fetched(fill.id, fill.length(), prefetch, index == first);
                    boolean inPlace = reserved[0] != null && publish(reserved[0], meta, fill);
                    reserved[0] = null;
                    inflight.remove(fill.id, fill);
                    // when the run stops after this block (the disk refused it, its reader left, the cache is closing),
                    // the rest leaves inflight before this block's last bytes are seen: whoever reads on fetches
                    // them anew rather than meeting them abandoned
                    boolean stopHere = index < last && (fill.file() == null || readerLeft || closing);
                    if (stopHere) {
                        stop(index + 1);
                    }
                    fill.finish(inPlace);
                    fetched += fill.length();
                    fill = null;
                    if (stopHere) {
                        return fetched;
                    }
                }
            } catch (IOException | RuntimeException e) {
                if (fill == null) {
                    stop(index);
                    throw e;
                }
                inflight.remove(fill.id, fill);
                if (reserved[0] != null) {
                    blockIndex.releaseReservation(reserved[0]);
                }
                stop(index + 1); // before anyone sees the failure: whoever fetches again finds the rest free to claim
                fill.fail(e instanceof IOException io ? io : new IOException(e));
                throw e;
            }
            stop(index);
            return fetched;
        }

        /** Abandons the blocks from {@code from} on (their readers fetch again), releases their room, closes the stream. */
        private void stop(long from) {
            for (long i = from; i <= last; i++) {
                BlockFill f = fills.get(i);
                inflight.remove(f.id, f); // first: a reader coming now fetches it, rather than meet it abandoned
                f.abandon();
            }
            reservations.values().forEach(blockIndex::releaseReservation);
            reservations.clear();
            try {
                stream.close();
            } catch (IOException ignored) {
                // done with it
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
        Claimed c = claimBlocks(meta, index, lastIndex, prefetch);
        if (c.outcome() != Claim.Outcome.STARTED) {
            return c.outcome() == Claim.Outcome.TAKEN ? Claim.TAKEN : Claim.REFUSED;
        }
        long start = index * config.blockSize();
        long length = (c.last() - index) * config.blockSize() + blockLength(meta, c.last());
        try {
            counters.upstreamRequests.increment();
            ObjectContent content = upstream.get(new GetRequest(meta.key(), ByteRange.of(start, length), meta.etag()));
            return new Claim(Claim.Outcome.STARTED, new Run(meta, content.stream(), index, c.last(), c.fills(), c.reservations(), prefetch));
        } catch (IOException | RuntimeException e) {
            if (e instanceof StoreException se && se.kind() == StoreException.Kind.PRECONDITION_FAILED) {
                onVersionChanged.accept(meta.key()); // the object changed under us: ask again next time
            }
            for (BlockFill f : c.fills().values()) {
                f.fail(e instanceof IOException io ? io : new IOException(e));
                inflight.remove(f.id, f);
            }
            c.reservations().values().forEach(blockIndex::releaseReservation);
            throw e;
        }
    }

    /**
     * A reader's run over a read already open upstream: {@code content}, a ranged GET that starts at block
     * {@code index} of {@code meta} (the version it answered), sent before the object's metadata was known, so
     * that a miss costs that one request and no HEAD before it. Claims the blocks the content covers, up to
     * {@code lastIndex}, as {@link #claimRun} would (a prefetch's when {@code prefetch}: its caller fetches it). TAKEN when another reader fetches the first block or it is
     * resident, REFUSED when the policy will not keep it: the content is the caller's then. The run is not started
     * ({@link #start}).
     */
    Claim claimOpened(ObjectMeta meta, long index, long lastIndex, ObjectContent content, boolean prefetch) {
        long contentLast = (content.range().end() - 1) / config.blockSize();
        Claimed c = claimBlocks(meta, index, Math.min(lastIndex, contentLast), prefetch);
        if (c.outcome() != Claim.Outcome.STARTED) {
            return c.outcome() == Claim.Outcome.TAKEN ? Claim.TAKEN : Claim.REFUSED;
        }
        return new Claim(Claim.Outcome.STARTED, new Run(meta, content.stream(), index, c.last(), c.fills(), c.reservations(), prefetch));
    }

    /** Blocks claimed for a run: {@code index} to {@code last}, each with its fill and reservation. */
    private record Claimed(Claim.Outcome outcome, long last, Map<Long, BlockFill> fills, Map<Long, BlockEntry> reservations) {
    }

    private Claimed claimBlocks(ObjectMeta meta, long index, long lastIndex, boolean prefetch) {
        BlockId firstId = new BlockId(meta.key(), meta.etag(), index);
        BlockFill first = new BlockFill(firstId, (int) blockLength(meta, index));
        if (inflight.putIfAbsent(firstId, first) != null) {
            return new Claimed(Claim.Outcome.TAKEN, -1, null, null); // someone else claimed it a moment ago
        }
        if (blockIndex.isResident(firstId)) { // its fetcher finished between our look at the disk and the claim
            first.abandon();
            inflight.remove(firstId, first);
            return new Claimed(Claim.Outcome.TAKEN, -1, null, null);
        }
        BlockEntry firstReservation = blockIndex.reserve(firstId, blockLength(meta, index), prefetch);
        if (firstReservation == null) {
            first.abandon(); // waiters decide for themselves
            inflight.remove(firstId, first);
            return new Claimed(Claim.Outcome.REFUSED, -1, null, null);
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
        return new Claimed(Claim.Outcome.STARTED, last, claimed, reservations);
    }

    /**
     * Fetches the blocks of {@code range} that are neither resident nor being fetched, kept when the policy
     * admits them (refused blocks are skipped, never fetched); see {@link BlockCache#prefetch}. Returns the
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
            fetched += run.fetch();
            index = run.last + 1;
        }
        return fetched;
    }

    /** Starts fetching a reader's run on a fetcher thread of its own: the reader reads the blocks as they arrive. */
    void start(Run run) {
        fetchers.execute(() -> {
            try {
                run.fetch();
            } catch (IOException | RuntimeException e) {
                LOG.debug("fetch of blocks {}-{} of {} failed: {}", run.first, run.last, run.meta.key(), e.toString());
            }
        });
    }

    /**
     * Stops the fetches: each stops at its next slice (its upstream stream is closed under it, should it be waiting),
     * abandoning its blocks, and nothing is published from now on. Waits for them to end, {@code CLOSE_WAIT} at
     * most, so that no block lands in the folder after the cache wrote its snapshot or another cache opened it.
     */
    void close() {
        List<Run> running;
        synchronized (active) {
            closing = true;
            running = List.copyOf(active);
        }
        for (Run r : running) {
            try {
                r.stream.close();
            } catch (IOException | RuntimeException ignored) {
                // stopping it is all we want
            }
        }
        long deadline = clock.nanoTime() + CLOSE_WAIT.toNanos();
        synchronized (active) {
            while (!active.isEmpty()) {
                long left = deadline - clock.nanoTime();
                if (left <= 0) {
                    LOG.warn("{} block fetches did not stop within {}", active.size(), CLOSE_WAIT);
                    return;
                }
                try {
                    active.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /**
     * Puts a complete block in place (header, rename; no fsync: see the note on durability) and makes its
     * reservation readable; the disk refusing (full, failing) costs only the keeping, never the read. True when
     * the block is in place.
     */
    private boolean publish(BlockEntry reserved, ObjectMeta meta, BlockFill fill) {
        BlockFile.Pending file = fill.file();
        if (file == null || closing) {
            if (file != null) {
                file.discard(); // the snapshot may be written already: a block placed now would be unknown to it
            }
            blockIndex.releaseReservation(reserved); // the disk refused its bytes on the way
            return false;
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
            return false;
        }
        unsynced.add(reserved.path);
        BlockEntry ready = new BlockEntry(id, reserved.path, meta.size(), fill.length(), headerLength, crc, false);
        ready.verified = true; // written from the bytes the upstream just sent
        ready.arrivedNanos = clock.nanoTime();
        check.written(ready);
        ready.ready = true;
        return blockIndex.publish(reserved, ready);
    }
}
