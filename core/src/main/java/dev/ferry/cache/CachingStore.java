package dev.ferry.cache;

import dev.ferry.cache.policy.EvictionPolicy;
import dev.ferry.cache.policy.Policies;
import dev.ferry.store.ByteRange;
import dev.ferry.store.CompletedPart;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local tier: an {@link ObjectStore} that keeps blocks of the objects read through it in a local
 * directory, in front of an upstream store.
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>Blocks.</b> Objects are cached in aligned blocks of {@code blockSize}; a read is served block by
 *       block, and the missing blocks of a read are fetched with one upstream ranged GET per run of adjacent
 *       misses (at most {@code maxRunBlocks}), streamed: the reader gets the first block while the run is
 *       still arriving.
 *   <li><b>Identity.</b> A block belongs to (bucket, key, ETag, index), and every upstream fetch is pinned
 *       to that ETag with If-Match, so bytes of one version are never served as another. When the upstream
 *       shows a new ETag, blocks of other versions are dropped.
 *   <li><b>Single flight, stream-through.</b> A block being fetched is a {@link BlockFill} in {@code inflight}:
 *       its bytes land in one buffer as they arrive and go to the file on the way; the reader that fetches
 *       it and every other reader of it get them as they arrive, not when the block is complete. A block is
 *       renamed into place only whole; a fetch that fails or is abandoned leaves no file, and its waiters
 *       see the failure (or, abandoned, fetch again).
 *   <li><b>Capacity.</b> Admission asks the {@link EvictionPolicy} (which may refuse), and evicts from high
 *       to low watermark; blocks being read or written are never victims.
 *   <li><b>Crash safety</b> (after Kafka's log and remote index cache): block files are written to a
 *       temporary name and renamed; each carries a header with its identity and CRC32C; on open,
 *       temporaries are deleted and the index comes from a snapshot written at clean close (the clean-
 *       shutdown marker) or, after a crash, from the block headers, every block then checked on first read
 *       ({@link CacheRecovery}).
 *   <li><b>Durability: what needs an fsync.</b> A block of this cache can always be fetched again, so losing
 *       one costs a refetch, never data; serving a wrong byte is the only failure that matters. Hence:
 *       <ul>
 *         <li>block files are <em>not</em> fsync'd on the read path (it cost more than the download on a
 *             cold read). A killed process loses nothing (the bytes are in the page cache); a power loss may
 *             leave a renamed file short, empty or with zeroed data, and the header (its length must match the
 *             file, its own CRC32C) and the data's CRC32C, checked on the first read of every block recovered
 *             by a scan even with {@code verify = NEVER}, reject it: it is dropped and fetched again;
 *         <li>the index snapshot claims its blocks are sound without checking them, so before it is written
 *             every block renamed since the last sync is fsync'd ({@link UnsyncedBlocks}, in parallel at
 *             close, and in the background past a backlog); if one cannot be, no snapshot is written and the
 *             next start scans and checks;
 *         <li>the snapshot itself is fsync'd, and write-back's journal and data
 *             ({@link dev.ferry.writeback.WriteBackStore}) are fsync'd before a write is acknowledged: they are
 *             the only copy, and none of this applies to them.
 *       </ul>
 *   <li><b>Faults degrade service, never data.</b> An unusable directory or a failing write turns the cache
 *       into a pass-through (with a warning and a count); a block failing its check is dropped and fetched
 *       again.
 * </ul>
 *
 * <p>The parts: {@link CacheRecovery} (what is on disk at open, the snapshot at close), {@link BlockIndex}
 * (entries, pins, reservations, eviction, the policy), and here the read path, prefetch, the sendfile path
 * and the metadata cache.
 *
 * <p>Thread-safe: the index and the policy are guarded by the {@link BlockIndex}'s one lock, held only for
 * bookkeeping; all I/O happens outside it. Blocks being fetched are claimed in {@code inflight} (a concurrent
 * map: the first to put a block fetches it), metadata is a concurrent map of immutable entries, counts are
 * {@link CacheCounters}; the directory lock is taken in the constructor and released once, at close.
 */
public final class CachingStore extends ForwardingObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(CachingStore.class);
    static final String SNAPSHOT = "index.snapshot";
    static final String LOCK = ".lock";
    static final String BLOCKS = "blocks";
    static final String TMP = "tmp";
    private static final int OPEN_FILES = 512;
    private static final int UNSYNCED_BACKLOG = 4096;

    private record MetaEntry(ObjectMeta meta, long fetchedAt) {
    }

    private final CacheConfig config;
    private final Clock clock;
    private final Path blocksDir;
    private final Path tmpDir;
    private FileChannel lockChannel;
    private FileLock fileLock;
    private volatile boolean passThrough;
    private volatile boolean closed;

    private final CacheCounters counters = new CacheCounters();
    private final BlockIndex blockIndex;
    private final ConcurrentHashMap<BlockId, BlockFill> inflight = new ConcurrentHashMap<>();
    private final UnsyncedBlocks unsynced = new UnsyncedBlocks(UNSYNCED_BACKLOG);
    private volatile ReadObserver readObserver;
    private final OpenFiles openFiles = new OpenFiles(OPEN_FILES);
    private final ConcurrentHashMap<ObjectKey, MetaEntry> metadata = new ConcurrentHashMap<>();

    /** A cache with the policy its config names (lru, pin or sieve). */
    public CachingStore(ObjectStore upstream, CacheConfig config) {
        this(upstream, config, policyNamed(config.policy()), Clock.system());
    }

    private static EvictionPolicy<BlockId> policyNamed(String name) {
        if (name.equals("min")) {
            throw new IllegalArgumentException("policy min needs the future access sequence: build the cache with a "
                    + "MinPolicy over the plan's blocks");
        }
        return Policies.create(name, List.of());
    }

    /** A cache with a given policy instance (MIN with a plan's future, say) and clock. */
    public CachingStore(ObjectStore upstream, CacheConfig config, EvictionPolicy<BlockId> policy, Clock clock) {
        super(upstream);
        this.config = Objects.requireNonNull(config, "config is null");
        this.blockIndex = new BlockIndex(config, Objects.requireNonNull(policy, "policy is null"), counters, path -> {
            openFiles.forget(path);
            unsynced.forget(path);
        });
        this.clock = Objects.requireNonNull(clock, "clock is null");
        this.blocksDir = config.dir().resolve(BLOCKS);
        this.tmpDir = config.dir().resolve(TMP);
        try {
            open();
        } catch (IOException | UncheckedIOException | OverlappingFileLockException | SecurityException e) {
            LOG.warn("cache directory {} is unusable ({}); serving every read from upstream", config.dir(), e.getMessage());
            passThrough = true;
            blockIndex.stopReserving();
            releaseLock();
        }
    }

    public CacheConfig config() {
        return config;
    }

    /** True when the cache could not use its directory and forwards every read upstream. */
    public boolean isPassThrough() {
        return passThrough;
    }

    private void open() throws IOException {
        Files.createDirectories(blocksDir);
        Files.createDirectories(tmpDir);
        lockChannel = FileChannel.open(config.dir().resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        fileLock = lockChannel.tryLock();
        if (fileLock == null) {
            throw new IOException("another process is using it");
        }
        blockIndex.load(new CacheRecovery(config.dir()).recover(counters.evictedCorrupt::increment));
    }

    /** Told of the blocks every read asks for, resident or not, in the order it asks for them. */
    @FunctionalInterface
    interface ReadObserver {
        void onRead(ObjectMeta meta, long firstIndex, long lastIndex);
    }

    /** Sets the one observer of reads (the sequential read-ahead); null for none. */
    void observeReads(ReadObserver observer) {
        this.readObserver = observer;
    }

    /** True when the block is on disk or being fetched: nothing for a prefetcher to do. */
    boolean residentOrInFlight(BlockId id) {
        return inflight.containsKey(id) || blockIndex.isResident(id);
    }

    /** What the cache has done so far. */
    public CacheStats stats() {
        BlockIndex.Usage usage = blockIndex.usage();
        return counters.stats(usage.blocks(), usage.bytes(), passThrough);
    }

    // ---- metadata ------------------------------------------------------------------------------------

    /**
     * The object's metadata when the cache knows it and it is still fresh (within the metadata TTL), without
     * asking upstream; null otherwise. For callers that must not block (a server's event loop).
     */
    public ObjectMeta freshMeta(ObjectKey key) {
        MetaEntry m = metadata.get(key);
        return m != null && !passThrough && clock.nanoTime() - m.fetchedAt() < config.metadataTtl().toNanos() ? m.meta() : null;
    }

    /** The metadata the cache holds for {@code key} when it is version {@code etag}, however old; null otherwise. */
    public ObjectMeta knownMeta(ObjectKey key, String etag) {
        MetaEntry m = metadata.get(key);
        return m != null && !passThrough && m.meta().etag().equals(etag) ? m.meta() : null;
    }

    private ObjectMeta resolve(ObjectKey key, String ifMatch) throws IOException {
        MetaEntry m = metadata.get(key);
        long now = clock.nanoTime();
        if (m != null) {
            if (ifMatch != null && ifMatch.equals(m.meta().etag())) {
                return m.meta();
            }
            if (ifMatch == null && now - m.fetchedAt() < config.metadataTtl().toNanos()) {
                return m.meta();
            }
        }
        ObjectMeta fresh;
        try {
            counters.upstreamRequests.increment();
            fresh = delegate.head(key);
        } catch (ObjectNotFoundException e) {
            metadata.remove(key);
            blockIndex.dropVersionsOtherThan(key, null);
            throw e;
        }
        metadata.put(key, new MetaEntry(fresh, now));
        blockIndex.dropVersionsOtherThan(key, fresh.etag());
        if (ifMatch != null && !ifMatch.equals(fresh.etag())) {
            throw new StoreException(StoreException.Kind.PRECONDITION_FAILED, 412,
                    "object changed: " + key + " has ETag " + fresh.etag() + ", not " + ifMatch, null);
        }
        return fresh;
    }

    // ---- reads ---------------------------------------------------------------------------------------

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        if (passThrough) {
            return delegate.head(key);
        }
        return resolve(key, null);
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        if (passThrough) {
            counters.upstreamRequests.increment();
            return delegate.get(request);
        }
        ObjectMeta meta = resolve(request.key(), request.ifMatch());
        ByteRange range = clipped(request, meta);
        if (range == null) {
            return new ObjectContent(meta, null, InputStream.nullInputStream());
        }
        return new ObjectContent(meta, range, new BlockStream(meta, range));
    }

    private long blockLength(ObjectMeta meta, long index) {
        return Math.min(config.blockSize(), meta.size() - index * config.blockSize());
    }

    /** Where a block's bytes come from for one reader. */
    private interface Source {
        int read(byte[] b, int off, int len, long offsetInBlock) throws IOException;

        void release();
    }

    private final class MemorySource implements Source {
        private final byte[] data;
        private final boolean fromCache;
        private final long base;

        MemorySource(byte[] data, boolean fromCache) {
            this(data, fromCache, 0);
        }

        /** {@code data} holds the block's bytes from {@code base} on (all of them when 0). */
        MemorySource(byte[] data, boolean fromCache, long base) {
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

    private final class FileSource implements Source {
        private final BlockEntry entry;
        private final OpenFiles.Handle file;

        FileSource(BlockEntry entry, OpenFiles.Handle file) {
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

    /**
     * An upstream ranged GET covering a run of missing blocks, each claimed (single flight, a {@link BlockFill}
     * in {@code inflight}) and with room reserved in the cache. Its driver starts the blocks in order and pulls
     * their bytes as it needs them; readers of the block being filled get the bytes as they arrive.
     * Not thread-safe: its driver's.
     */
    private final class Run {
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

    /** A block being filled, for one reader: the driver pulls what it needs, anyone else waits for it. */
    private final class FillSource implements Source {
        private final BlockFill fill;
        private final Run driver;

        FillSource(BlockFill fill, Run driver) {
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

    /** Reads a range block by block: from disk, from a fetch in flight, or from a run it fetches itself. */
    private final class BlockStream extends dev.ferry.store.BlockReadingInputStream {
        private final ObjectMeta meta;
        private final long end;
        private final long lastIndex;
        private long position;
        private long currentIndex = -1;
        private Source current;
        private Run run;
        private boolean streamClosed;

        BlockStream(ObjectMeta meta, ByteRange range) {
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
            int want = (int) Math.min(len, Math.min(end - position, blockStart + blockLength(meta, index) - position));
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
            ReadObserver observer = readObserver;
            if (observer != null) {
                observer.onRead(meta, index, index);
            }
            while (true) {
                if (run != null) {
                    run.finishCurrent();
                    if (!run.done() && run.next == index) {
                        return new FillSource(run.startNext(), run);
                    }
                    if (run.done()) {
                        run.stream.close();
                    } else {
                        run.abandon();
                    }
                    run = null;
                }
                Source cached = fromDisk(id);
                if (cached != null) {
                    return cached;
                }
                BlockFill pending = inflight.get(id);
                if (pending != null) {
                    counters.hits.increment();
                    blockIndex.onHit(id); // an access like any other: plan-aware policies must see it
                    return new FillSource(pending, null); // its bytes as they arrive; read() starts again if it is abandoned
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
            Claim claim = claimRun(meta, index, lastIndex, false);
            if (claim.outcome() == Claim.Outcome.TAKEN) {
                return null;
            }
            if (claim.outcome() == Claim.Outcome.REFUSED) {
                return bypass(index);
            }
            run = claim.run();
            return new FillSource(run.startNext(), run);
        }

        /** A refused block: fetch only the part of it this read still needs, keep nothing. */
        private Source bypass(long index) throws IOException {
            long blockStart = index * config.blockSize();
            long from = Math.max(position, blockStart);
            long to = Math.min(end, blockStart + blockLength(meta, index));
            counters.upstreamRequests.increment();
            byte[] data;
            try (ObjectContent c = delegate.get(new GetRequest(meta.key(), ByteRange.of(from, to - from), meta.etag()))) {
                data = dev.ferry.store.Bytes.read(c.stream(), (int) (to - from));
            } catch (StoreException e) {
                if (e.kind() == StoreException.Kind.PRECONDITION_FAILED) {
                    metadata.remove(meta.key());
                }
                throw e;
            }
            if (data.length != to - from) {
                throw new StoreException(StoreException.Kind.RETRYABLE, 0, "upstream sent " + data.length + " of "
                        + (to - from) + " bytes of " + meta.key() + " at " + from, null);
            }
            counters.misses.increment();
            counters.bytesFromUpstream.add(data.length);
            return new MemorySource(data, false, from - blockStart);
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
    }

    /** What came of trying to start a run at a block. */
    private record Claim(Outcome outcome, Run run) {
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
    private Claim claimRun(ObjectMeta meta, long index, long lastIndex, boolean prefetch) throws IOException {
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
        BlockEntry firstReservation = blockIndex.reserve(firstId, blockLength(meta, index));
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
            BlockEntry reserved = blockIndex.reserve(next, blockLength(meta, last + 1));
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
            ObjectContent content = delegate.get(new GetRequest(meta.key(), ByteRange.of(start, length), meta.etag()));
            return new Claim(Claim.Outcome.STARTED, new Run(meta, content.stream(), index, last, claimed, reservations, prefetch));
        } catch (IOException | RuntimeException e) {
            if (e instanceof StoreException se && se.kind() == StoreException.Kind.PRECONDITION_FAILED) {
                metadata.remove(meta.key()); // the object changed under us: ask again next time
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
     * Fetches ahead of readers: the blocks of the request's range that are neither resident nor being
     * fetched, kept when the policy admits them (refused blocks are skipped, never fetched). Resident blocks
     * are not touched and no hit or miss is counted: a prefetch is not an access; its blocks count as
     * prefetched. Returns the bytes fetched.
     */
    public long prefetch(GetRequest request) throws IOException {
        if (passThrough || closed) {
            return 0;
        }
        ObjectMeta meta = resolve(request.key(), request.ifMatch());
        ByteRange range = clipped(request, meta);
        if (range == null) {
            return 0;
        }
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

    /** The range a request reads of {@code meta}: null for an empty object; 416 when it starts past the end. */
    private static ByteRange clipped(GetRequest request, ObjectMeta meta) throws StoreException {
        if (request.range() == null) {
            return meta.size() == 0 ? null : ByteRange.of(0, meta.size());
        }
        ByteRange range = request.range().clip(meta.size());
        if (range == null) {
            throw new StoreException(StoreException.Kind.FATAL, 416, "range " + request.range().toHttpHeader()
                    + " starts past the end of " + request.key() + " (" + meta.size() + " bytes)", null);
        }
        return range;
    }

    /** One block's bytes in its file: what a server sends with {@code sendfile}. The channel is the caller's to close. */
    public record FileRegion(FileChannel channel, long position, long length) {
    }

    /** A read whose every block is on the local disk, as file regions in order; see {@link #openResident}. */
    public record ResidentRead(ObjectMeta meta, ByteRange range, List<FileRegion> regions) implements java.io.Closeable {
        /** Closes every region's channel (closing one twice is harmless). */
        @Override
        public void close() {
            for (FileRegion r : regions) {
                try {
                    r.channel().close();
                } catch (IOException ignored) {
                    // read-only channel: nothing to lose
                }
            }
        }
    }

    /**
     * The read as file regions when every block it touches is resident and needs no check before use (so
     * its bytes can go file-to-socket without passing through the JVM); null otherwise, and the caller reads
     * with {@link #get}. Counts as hits, like {@link #get}. An empty object or range is null too.
     * Channels are opened while the blocks are pinned: eviction afterwards deletes the file's name, not the
     * bytes the open channel reads.
     */
    public ResidentRead openResident(GetRequest request) throws IOException {
        if (passThrough || closed) {
            return null;
        }
        ObjectMeta meta = resolve(request.key(), request.ifMatch());
        ByteRange range = clipped(request, meta);
        if (range == null) {
            return null;
        }
        long firstIndex = range.offset() / config.blockSize();
        long lastIndex = (range.end() - 1) / config.blockSize();
        List<BlockId> ids = new ArrayList<>();
        for (long i = firstIndex; i <= lastIndex; i++) {
            ids.add(new BlockId(meta.key(), meta.etag(), i));
        }
        List<BlockEntry> pinned = blockIndex.pinAllChecked(ids, config.verify());
        if (pinned == null) {
            return null;
        }
        List<FileRegion> regions = new ArrayList<>(pinned.size());
        try {
            for (BlockEntry e : pinned) {
                long blockStart = e.id.index() * config.blockSize();
                long from = Math.max(range.offset(), blockStart);
                long to = Math.min(range.end(), blockStart + e.dataLength);
                FileChannel ch = FileChannel.open(e.path, StandardOpenOption.READ);
                regions.add(new FileRegion(ch, e.headerLength + from - blockStart, to - from));
                if (ch.size() < e.headerLength + (long) e.dataLength) {
                    throw new BlockFile.CorruptBlockException(e.path + ": ends early");
                }
            }
        } catch (IOException bad) {
            new ResidentRead(meta, range, regions).close();
            blockIndex.unpinAll(pinned);
            LOG.warn("cannot send cached blocks of {} from disk ({}); reading them instead", meta.key(), bad.getMessage());
            return null;
        }
        blockIndex.unpinAsHits(pinned);
        counters.hits.add(pinned.size());
        counters.bytesFromCache.add(range.length());
        ReadObserver observer = readObserver;
        if (observer != null) {
            observer.onRead(meta, firstIndex, lastIndex);
        }
        return new ResidentRead(meta, range, regions);
    }

    /** A pinned source over a resident block, or null when it is not (or no longer) usable. */
    private Source fromDisk(BlockId id) {
        BlockEntry e = blockIndex.pinForRead(id);
        if (e == null) {
            return null;
        }
        OpenFiles.Handle file = null;
        try {
            file = openFiles.acquire(e.path);
            if (e.needsCheck(config.verify())) {
                BlockFile.Header h = BlockFile.readHeader(file.channel, e.path);
                if (!h.id().equals(id)) {
                    throw new BlockFile.CorruptBlockException(e.path + ": holds " + h.id() + ", not " + id);
                }
                byte[] data = BlockFile.readVerified(file.channel, h, e.path);
                e.verified = true;
                file.release();
                blockIndex.unpin(e);
                counters.hits.increment();
                return new MemorySource(data, true);
            }
            counters.hits.increment();
            return new FileSource(e, file);
        } catch (IOException bad) {
            LOG.warn("dropping cached block {} of {}: {}", e.path, id.key(), bad.getMessage());
            if (file != null) {
                file.release();
            }
            blockIndex.dropCorrupt(e);
            return null;
        }
    }

    // ---- admission, eviction, writing ------------------------------------------------------------------

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

    // ---- writes go through, and invalidate --------------------------------------------------------------

    private void invalidate(ObjectKey key, ObjectMeta now) {
        if (now == null) {
            metadata.remove(key);
            blockIndex.dropVersionsOtherThan(key, null);
        } else {
            metadata.put(key, new MetaEntry(now, clock.nanoTime()));
            blockIndex.dropVersionsOtherThan(key, now.etag());
        }
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        ObjectMeta meta = delegate.put(key, body);
        invalidate(key, meta);
        return meta;
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        delegate.delete(key);
        invalidate(key, null);
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        ObjectMeta meta = delegate.completeMultipart(upload, parts);
        invalidate(upload.key(), meta);
        return meta;
    }

    // ---- shutdown -------------------------------------------------------------------------------------

    /** Writes the index snapshot (the clean-shutdown marker), releases the directory, closes upstream. */
    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            blockIndex.stopReserving();
            if (!passThrough && !unsynced.syncAll()) {
                LOG.warn("cannot fsync every cached block; no index snapshot, so the next start checks the blocks it finds");
            } else if (!passThrough) {
                try {
                    new CacheRecovery(config.dir()).writeSnapshot(blockIndex.readyEntries());
                } catch (IOException e) {
                    LOG.warn("cannot write the cache index snapshot ({}); the next start rebuilds it from the blocks", e.getMessage());
                }
            }
            releaseLock();
            openFiles.closeAll();
        }
        super.close();
    }

    /** Leaves as a crash would: no snapshot, lock released. For tests of recovery. */
    void abandonWithoutSnapshot() {
        closed = true;
        blockIndex.stopReserving();
        releaseLock();
    }

    private void releaseLock() {
        try {
            if (fileLock != null) {
                fileLock.release();
            }
            if (lockChannel != null) {
                lockChannel.close();
            }
        } catch (IOException e) {
            LOG.warn("cannot release the cache directory lock: {}", e.getMessage());
        }
        fileLock = null;
        lockChannel = null;
    }
}
