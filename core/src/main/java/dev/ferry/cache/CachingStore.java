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
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
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
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
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
 *       its bytes go to its temporary file as they arrive, and the reader that asked for it and every other
 *       reader of it read them there as they arrive, not when the block is complete. A reader's run is fetched
 *       on a thread of its own at the pace of upstream and the disk, so a reader that stops reading holds no
 *       bytes in memory and holds back neither the fetch nor the block's other readers. A block is renamed
 *       into place only whole; a fetch that fails or is abandoned leaves no file, and its waiters see the
 *       failure (or, abandoned, fetch again).
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
 *   <li><b>Checked before they leave.</b> Every path by which cached bytes leave (readers of {@link #get}, the
 *       sendfile path {@link #openResident}) asks {@link BlockCheck} first: under the default
 *       {@link VerifyMode#ON_LOAD} a block is read back and checked against its CRC32C unless its bytes are
 *       provably those last checked (same file, unchanged; pages never left the page cache). Bytes read from
 *       a fetch under way are the ones it wrote, and are not checked; once the block is in place its readers
 *       read it back from its file, unchecked only while they provably are still those bytes
 *       ({@link BlockCheck#trustedAsFetched}).
 *   <li><b>Faults degrade service, never data.</b> An unusable directory or a failing write turns the cache
 *       into a pass-through (with a warning and a count); a block failing its check is dropped and fetched
 *       again.
 * </ul>
 *
 * <h2>The parts</h2>
 * As Trino's cache file system and Kafka's remote index cache are arranged, this class is the wrapper that
 * composes them: {@link CacheRecovery} (what is on disk at open, the snapshot at close), {@link BlockIndex}
 * (entries, pins, reservations, eviction under its lock, the policy calls), {@link BlockRuns} (single flight,
 * runs of misses, publishing, prefetch) and {@link BlockStream} (one reader's range, block by block, from its
 * sources). Here remain the directory lock, the metadata TTL cache, the sendfile path ({@link #openResident(GetRequest, boolean)})
 * and write invalidation.
 *
 * <p>Thread-safe: the index and the policy are guarded by the {@link BlockIndex}'s one lock, held only for
 * bookkeeping; all I/O happens outside it. Blocks being fetched are claimed in {@link BlockRuns}' concurrent
 * map (the first to put a block fetches it), metadata is a concurrent map of immutable entries, counts are
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

    /** A key's metadata, when it was asked for, and whether it is all a HEAD answers (a LIST's or a ranged GET's names no checksum). */
    private record MetaEntry(ObjectMeta meta, long fetchedAt, boolean whole) {
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
    private final UnsyncedBlocks unsynced = new UnsyncedBlocks(UNSYNCED_BACKLOG);
    private final BlockRuns runs;
    private final OpenFiles openFiles = new OpenFiles(OPEN_FILES);
    private final BlockCheck check;
    private final ConcurrentHashMap<ObjectKey, MetaEntry> metadata = new ConcurrentHashMap<>();
    /** Misses being asked upstream with no metadata known ({@link #openMiss}): one per key, the rest wait for its answer. */
    private final ConcurrentHashMap<ObjectKey, CompletableFuture<Void>> opening = new ConcurrentHashMap<>();
    /** Keys whose stale metadata is being revalidated in the background: one HEAD per key at a time. */
    private final Set<ObjectKey> revalidating = ConcurrentHashMap.newKeySet();
    private final Executor revalidators;
    /** Versions a reader vouches for ({@link #trustVersions}): per key, each ETag with its number of vouchers. */
    private final ConcurrentHashMap<ObjectKey, Map<String, Integer>> trusted = new ConcurrentHashMap<>();

    /** A cache with the policy its config names (lru, pin or sieve). */
    public CachingStore(ObjectStore upstream, CacheConfig config) {
        this(upstream, config, Clock.system());
    }

    /** The same, on {@code clock}. */
    public CachingStore(ObjectStore upstream, CacheConfig config, Clock clock) {
        this(upstream, config, policyNamed(config.policy()), clock);
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
        this(upstream, config, policy, clock, task -> Thread.ofVirtual().name("ferry-revalidate").start(task));
    }

    /** ... revalidating stale metadata in the background on {@code revalidators} (see {@link #servable}). */
    public CachingStore(ObjectStore upstream, CacheConfig config, EvictionPolicy<BlockId> policy, Clock clock, Executor revalidators) {
        super(upstream);
        this.revalidators = Objects.requireNonNull(revalidators, "revalidators is null");
        this.config = Objects.requireNonNull(config, "config is null");
        this.blockIndex = new BlockIndex(config, Objects.requireNonNull(policy, "policy is null"), counters, path -> {
            openFiles.forget(path);
            unsynced.forget(path);
        });
        this.clock = Objects.requireNonNull(clock, "clock is null");
        this.check = new BlockCheck(config.verify(), counters, clock);
        this.runs = new BlockRuns(config, upstream, blockIndex, counters, openFiles, check, unsynced, metadata::remove,
                fetch -> Thread.ofVirtual().name("ferry-fetch").start(fetch), clock);
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
        runs.observeReads(observer);
    }

    /** True when the block is on disk or being fetched: nothing for a prefetcher to do. */
    public boolean residentOrInFlight(BlockId id) {
        return runs.residentOrInFlight(id);
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
        return m != null && !passThrough && servable(key, m, clock.nanoTime()) ? m.meta() : null;
    }

    /**
     * Whether a read may go on with {@code m} without asking upstream first: fresh ({@link #fresh}), or stale by
     * less than the TTL again (younger than twice the TTL), in which case it is served as it is and revalidated
     * in the background (stale-while-revalidate, RFC 5861): the read waits for nothing, and the key's next reads
     * see what the revalidation found. Older than twice the TTL, the read asks upstream itself. So a change made
     * upstream behind ferry's back is seen by every read that starts at least twice the TTL after it; with a TTL
     * of 0 every read asks first.
     */
    private boolean servable(ObjectKey key, MetaEntry m, long now) {
        if (fresh(key, m, now)) {
            return true;
        }
        long ttl = config.metadataTtl().toNanos();
        if (now - m.fetchedAt() - ttl < ttl) {
            revalidate(key, m);
            return true;
        }
        return false;
    }

    /**
     * Asks upstream for {@code key}'s metadata in the background (one HEAD per key at a time), and makes the answer
     * the key's metadata unless the entry changed meanwhile (a write through ferry is newer than any answer to a
     * request sent before it). A failure leaves the entry to age past twice the TTL: reads then ask themselves.
     */
    private void revalidate(ObjectKey key, MetaEntry seen) {
        if (closed || !revalidating.add(key)) {
            return;
        }
        try {
            revalidators.execute(() -> {
                try {
                    long sent = clock.nanoTime();
                    counters.upstreamRequests.increment();
                    ObjectMeta now;
                    try {
                        now = delegate.head(key);
                    } catch (ObjectNotFoundException gone) {
                        if (!closed && metadata.remove(key, seen)) {
                            blockIndex.dropVersionsOtherThan(key, null);
                        }
                        return;
                    }
                    if (!closed && metadata.replace(key, seen, new MetaEntry(now, sent, true)) && !now.etag().equals(seen.meta().etag())) {
                        blockIndex.dropVersionsOtherThan(key, now.etag());
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.debug("revalidating {} failed ({}); its reads ask upstream once its metadata is twice the TTL old", key, e.toString());
                } finally {
                    revalidating.remove(key);
                }
            });
        } catch (RejectedExecutionException e) {
            revalidating.remove(key);
        }
    }

    /** Within the metadata TTL, or a version a reader vouches for: no need to ask upstream. */
    private boolean fresh(ObjectKey key, MetaEntry m, long now) {
        if (now - m.fetchedAt() < config.metadataTtl().toNanos()) {
            return true;
        }
        Map<String, Integer> etags = trusted.get(key);
        return etags != null && etags.containsKey(m.meta().etag());
    }

    /** Versions trusted without asking upstream until {@link #close}d ({@link #trustVersions}). */
    public final class TrustedVersions implements AutoCloseable {
        private final Map<ObjectKey, String> versions;
        private boolean released;

        private TrustedVersions(Map<ObjectKey, String> versions) {
            this.versions = versions;
        }

        /** How many objects this vouches for. */
        public int size() {
            return versions.size();
        }

        @Override
        public synchronized void close() {
            if (released) {
                return;
            }
            released = true;
            versions.forEach((key, etag) -> trusted.computeIfPresent(key, (k, etags) -> {
                Map<String, Integer> left = new HashMap<>(etags);
                left.computeIfPresent(etag, (e, n) -> n == 1 ? null : n - 1);
                return left.isEmpty() ? null : Map.copyOf(left);
            }));
        }
    }

    /**
     * Trusts these versions (key to ETag) without revalidation until the handle is closed: once the cache has
     * seen a key at its vouched ETag, reads of it are answered from the cache's metadata however old, with no
     * request upstream. For a registered job, whose manifest pins the version of everything it reads: a change
     * made upstream behind ferry's back is seen by readers only when no job vouches for the old version any
     * more. A write or delete through ferry replaces the cache's metadata, so it is seen at once, as ever.
     */
    public TrustedVersions trustVersions(Map<ObjectKey, String> versions) {
        Map<ObjectKey, String> copy = Map.copyOf(versions);
        copy.forEach((key, etag) -> trusted.compute(key, (k, etags) -> {
            Map<String, Integer> more = etags == null ? new HashMap<>() : new HashMap<>(etags);
            more.merge(etag, 1, Integer::sum);
            return Map.copyOf(more);
        }));
        return new TrustedVersions(copy);
    }

    /**
     * Metadata a listing gave (a LIST names each object's size and ETag), remembered as a HEAD's answer would
     * be, fresh for the metadata TTL: a reader of a listed object then sends no HEAD before its GET. An entry
     * that is still fresh is kept (a HEAD or a write since the LIST was sent may be newer than the listing).
     */
    public void listed(ObjectMeta meta) {
        if (passThrough) {
            return;
        }
        long now = clock.nanoTime();
        MetaEntry m = metadata.get(meta.key());
        if (m != null && fresh(meta.key(), m, now)) {
            return;
        }
        metadata.put(meta.key(), new MetaEntry(meta, now, false));
        blockIndex.dropVersionsOtherThan(meta.key(), meta.etag());
    }

    /**
     * {@code meta}, as {@link #head} answered it, with the object's checksum where the store keeps one: when the cache's
     * metadata came from a listing or from a miss's ranged GET (neither names a checksum), a HEAD asks for it, and its
     * answer becomes the key's metadata. For a client asking for the checksum ({@code x-amz-checksum-mode}): with
     * {@code wait} (a HEAD's, whose answer is the metadata) this asks now; without (a read, which must not wait on
     * it, and may be on an event loop) it returns {@code meta} as it is and asks in the background.
     */
    public ObjectMeta withChecksum(ObjectKey key, ObjectMeta meta, boolean wait) throws IOException {
        MetaEntry m = metadata.get(key);
        if (passThrough || m == null || m.whole() || !m.meta().equals(meta)) {
            return meta;
        }
        if (!wait) {
            revalidate(key, m); // in the background: this read goes without it, the next ones have it
            return meta;
        }
        return headUpstream(key, null);
    }

    /** The metadata the cache holds for {@code key} when it is version {@code etag}, however old; null otherwise. */
    public ObjectMeta knownMeta(ObjectKey key, String etag) {
        MetaEntry m = metadata.get(key);
        return m != null && !passThrough && m.meta().etag().equals(etag) ? m.meta() : null;
    }

    private ObjectMeta resolve(ObjectKey key, String ifMatch) throws IOException {
        ObjectMeta known = local(key, ifMatch);
        return known != null ? known : headUpstream(key, ifMatch);
    }

    /** The metadata a read may go on with without asking upstream: fresh, named by If-Match, or pinned; null otherwise. */
    private ObjectMeta local(ObjectKey key, String ifMatch) {
        MetaEntry m = metadata.get(key);
        long now = clock.nanoTime();
        if (m != null) {
            if (ifMatch != null && ifMatch.equals(m.meta().etag())) {
                return m.meta();
            }
            if (ifMatch == null && servable(key, m, now)) {
                return m.meta();
            }
        }
        if (ifMatch != null) {
            return blockIndex.pinnedMeta(key, ifMatch); // a pinned version, perhaps superseded: its resident blocks still serve it
        }
        return null;
    }

    /** Asks upstream with a HEAD; the answer becomes the key's metadata. */
    private ObjectMeta headUpstream(ObjectKey key, String ifMatch) throws IOException {
        long now = clock.nanoTime();
        ObjectMeta fresh;
        try {
            counters.upstreamRequests.increment();
            fresh = delegate.head(key);
        } catch (ObjectNotFoundException e) {
            metadata.remove(key);
            blockIndex.dropVersionsOtherThan(key, null);
            throw e;
        }
        metadata.put(key, new MetaEntry(fresh, now, true));
        blockIndex.dropVersionsOtherThan(key, fresh.etag());
        if (ifMatch != null && !ifMatch.equals(fresh.etag())) {
            throw new StoreException(StoreException.Kind.PRECONDITION_FAILED, 412,
                    "object changed: " + key + " has ETag " + fresh.etag() + ", not " + ifMatch, null);
        }
        return fresh;
    }

    // ---- version pins --------------------------------------------------------------------------------

    /** A pinned version; {@link #close} releases it (once). */
    public final class VersionPin implements AutoCloseable {
        private final ObjectMeta meta;
        private boolean released;

        private VersionPin(ObjectMeta meta) {
            this.meta = meta;
        }

        public ObjectMeta meta() {
            return meta;
        }

        @Override
        public synchronized void close() {
            if (!released) {
                released = true;
                blockIndex.unpinVersion(meta);
            }
        }
    }

    /**
     * Keeps {@code meta}'s version readable from the blocks on local disk until the pin is closed, even after a
     * newer version (or a delete) is seen upstream: those blocks are not dropped, and no eviction takes them once
     * the store no longer has the version; reads naming the version ({@code If-Match}) are answered from them
     * without asking upstream. Blocks of it that were not resident when it was superseded cannot be fetched any
     * more (412, as without a pin). For a reader that promised its caller the bytes of one version for as long
     * as it is open: a file handle of {@code ferry mount}. Pins of one version add up.
     */
    public VersionPin pinVersion(ObjectMeta meta) {
        Objects.requireNonNull(meta, "meta is null");
        blockIndex.pinVersion(meta);
        return new VersionPin(meta);
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
        ObjectMeta meta = local(request.key(), request.ifMatch());
        if (meta == null) {
            CompletableFuture<Void> mine = new CompletableFuture<>();
            CompletableFuture<Void> other = opening.putIfAbsent(request.key(), mine);
            if (other == null) {
                ObjectContent opened;
                try {
                    opened = openMiss(request);
                } finally {
                    opening.remove(request.key(), mine);
                    mine.complete(null);
                }
                if (opened != null) {
                    return opened;
                }
            } else {
                other.join(); // one miss of a key at a time: its answer is the metadata, its blocks are in flight
            }
            meta = local(request.key(), request.ifMatch());
        }
        if (meta == null) {
            meta = headUpstream(request.key(), request.ifMatch());
        }
        ByteRange range = clipped(request, meta);
        if (range == null) {
            return new ObjectContent(meta, null, InputStream.nullInputStream());
        }
        return new ObjectContent(meta, range, new BlockStream(runs, meta, range));
    }

    /**
     * A miss's one request: a ranged GET of the run of blocks from {@code first} the read wants (at most a run),
     * pinned to the request's If-Match; null when upstream answers 416 (an empty object, or a read past its end).
     * A key upstream does not have is forgotten here, its blocks dropped.
     */
    private ObjectContent missGet(GetRequest request, long first) throws IOException {
        ObjectKey key = request.key();
        long blockSize = config.blockSize();
        long wanted = request.range() == null ? Long.MAX_VALUE : (request.range().end() - 1) / blockSize;
        long last = first + Math.min(wanted - first, config.maxRunBlocks() - 1);
        try {
            counters.upstreamRequests.increment();
            return delegate.get(new GetRequest(key, ByteRange.of(first * blockSize, (last - first + 1) * blockSize), request.ifMatch()));
        } catch (ObjectNotFoundException e) {
            metadata.remove(key);
            blockIndex.dropVersionsOtherThan(key, null);
            throw e;
        } catch (StoreException e) {
            if (e.httpStatus() == 416) {
                return null;
            }
            throw e;
        }
    }

    /**
     * A read whose metadata the cache does not know (or must ask again): one ranged GET upstream, of the run of
     * blocks the read starts in, with no HEAD before it; the answer names the version (ETag, size from
     * {@code Content-Range}, last-modified, attributes) and becomes the key's metadata, and its bytes fill the
     * blocks as a reader's run would ({@link BlockRuns#claimOpened}). Null, having sent nothing, when the key's
     * known version has its first block on disk (a HEAD costs less than a GET of bytes the cache holds), and
     * null when upstream answers 416 (an empty object, where a store answers a ranged GET so, or a read past
     * the end): then the caller asks with a HEAD. When the answer's first block is being fetched by another
     * reader, or the policy refuses it, the answer is closed and the read goes on as a read of known metadata.
     */
    private ObjectContent openMiss(GetRequest request) throws IOException {
        ObjectKey key = request.key();
        long blockSize = config.blockSize();
        long first = request.range() == null ? 0 : request.range().offset() / blockSize;
        if (blockIndex.holdsAnyVersionAt(key, first)) {
            return null; // perhaps the bytes wanted: a HEAD says whether they still are
        }
        long now = clock.nanoTime();
        ObjectContent content = missGet(request, first);
        if (content == null) {
            return null;
        }
        boolean handedOver = false;
        try {
            ObjectMeta meta = content.meta();
            metadata.put(key, new MetaEntry(meta, now, false));
            blockIndex.dropVersionsOtherThan(key, meta.etag());
            ByteRange range = clipped(request, meta);
            if (range == null) {
                return new ObjectContent(meta, null, InputStream.nullInputStream());
            }
            if (content.range() == null || content.range().offset() != first * blockSize) {
                return new ObjectContent(meta, range, new BlockStream(runs, meta, range));
            }
            BlockRuns.Claim claim = runs.claimOpened(meta, first, (range.end() - 1) / blockSize, content, false);
            if (claim.outcome() == BlockRuns.Claim.Outcome.STARTED) {
                handedOver = true;
                runs.start(claim.run());
                return new ObjectContent(meta, range, new BlockStream(runs, meta, range, claim.run()));
            }
            if (claim.outcome() == BlockRuns.Claim.Outcome.REFUSED) {
                // the policy keeps none of it: the bytes this read wants of the first block, from the answer at hand
                long blockEnd = Math.min(meta.size(), (first + 1) * blockSize);
                content.stream().skipNBytes(range.offset() - first * blockSize);
                BlockStream.Source bytes = runs.unkept(meta, content.stream(), range.offset(), Math.min(range.end(), blockEnd), first * blockSize);
                return new ObjectContent(meta, range, new BlockStream(runs, meta, range, null, bytes));
            }
            return new ObjectContent(meta, range, new BlockStream(runs, meta, range));
        } finally {
            if (!handedOver) {
                content.close();
            }
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
        ObjectMeta meta = local(request.key(), request.ifMatch());
        if (meta == null) {
            long fetched = prefetchMiss(request);
            if (fetched >= 0) {
                return fetched;
            }
            meta = headUpstream(request.key(), request.ifMatch());
        }
        ByteRange range = clipped(request, meta);
        if (range == null) {
            return 0;
        }
        return runs.prefetch(meta, range);
    }

    /**
     * {@link #prefetch} of an object whose metadata the cache does not know, as {@link #openMiss} reads one: one
     * ranged GET (pinned to the request's If-Match, a plan's ETag) whose answer is the metadata, its run fetched on
     * this thread, then the rest of the range as any prefetch. -1, having sent nothing or been answered 416, when
     * the caller should ask with a HEAD.
     */
    private long prefetchMiss(GetRequest request) throws IOException {
        ObjectKey key = request.key();
        long blockSize = config.blockSize();
        long first = request.range() == null ? 0 : request.range().offset() / blockSize;
        if (blockIndex.holdsAnyVersionAt(key, first) || opening.containsKey(key)) {
            return -1;
        }
        long now = clock.nanoTime();
        ObjectContent content = missGet(request, first);
        if (content == null) {
            return -1;
        }
        BlockRuns.Run run = null;
        ObjectMeta meta;
        ByteRange range;
        try {
            meta = content.meta();
            metadata.put(key, new MetaEntry(meta, now, false));
            blockIndex.dropVersionsOtherThan(key, meta.etag());
            range = request.range() == null ? (meta.size() == 0 ? null : ByteRange.of(0, meta.size())) : request.range().clip(meta.size());
            if (range == null || content.range() == null || content.range().offset() != first * blockSize) {
                return 0;
            }
            BlockRuns.Claim claim = runs.claimOpened(meta, first, (range.end() - 1) / blockSize, content, true);
            run = claim.outcome() == BlockRuns.Claim.Outcome.STARTED ? claim.run() : null;
        } finally {
            if (run == null) {
                content.close();
            }
        }
        return (run == null ? 0 : run.fetch()) + runs.prefetch(meta, range); // run.fetch closes the content
    }

    /** {@link #prefetch(GetRequest)} of one block, pinned to its version: the bytes fetched. */
    public long prefetch(BlockId block) throws IOException {
        long start = block.index() * config.blockSize();
        return prefetch(new GetRequest(block.key(), ByteRange.of(start, config.blockSize()), block.etag()));
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
    public record ResidentRead(ObjectMeta meta, ByteRange range, List<FileRegion> regions) implements Closeable {
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
     * The read as file regions when every block it touches is resident and its bytes may leave as they are on
     * disk (so they can go file-to-socket without passing through the JVM); null otherwise, and the caller reads
     * with {@link #get}. Under {@link VerifyMode#ON_LOAD} a block {@link BlockCheck} does not trust is checked
     * here first when {@code mayCheck} (reading it whole: the caller may block on the disk), and makes this null
     * when not (on an event loop: the caller tries again where it may block); one that fails its check is dropped
     * and this is null, so the caller's {@link #get} fetches it again. Under {@link VerifyMode#ALWAYS} always
     * null: every read is served from a copy checked in memory. Counts as hits, like {@link #get}. An empty
     * object or range is null too. Channels are opened while the blocks are pinned: eviction afterwards
     * deletes the file's name, not the bytes the open channel reads.
     */
    public ResidentRead openResident(GetRequest request, boolean mayCheck) throws IOException {
        if (passThrough || closed || config.verify() == VerifyMode.ALWAYS) {
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
        List<BlockEntry> pinned = blockIndex.pinAll(ids);
        if (pinned == null) {
            return null;
        }
        List<FileRegion> regions = new ArrayList<>(pinned.size());
        BlockEntry checking = null;
        try {
            for (BlockEntry e : pinned) {
                long blockStart = e.id.index() * config.blockSize();
                long from = Math.max(range.offset(), blockStart);
                long to = Math.min(range.end(), blockStart + e.dataLength);
                if (!trusted(e, from - blockStart, to - from)) {
                    if (!mayCheck) {
                        new ResidentRead(meta, range, regions).close();
                        blockIndex.unpinAll(pinned);
                        return null;
                    }
                    checking = e;
                    check.check(e);
                    checking = null;
                }
                FileChannel ch = FileChannel.open(e.path, StandardOpenOption.READ);
                regions.add(new FileRegion(ch, e.headerLength + from - blockStart, to - from));
                if (ch.size() < e.headerLength + (long) e.dataLength) {
                    throw new BlockFile.CorruptBlockException(e.path + ": ends early");
                }
            }
        } catch (IOException bad) {
            new ResidentRead(meta, range, regions).close();
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
        ReadObserver observer = runs.observer();
        if (observer != null) {
            observer.onRead(meta, firstIndex, lastIndex);
        }
        return new ResidentRead(meta, range, regions);
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

    // ---- writes go through, and invalidate --------------------------------------------------------------

    private void invalidate(ObjectKey key, ObjectMeta now) {
        if (now == null) {
            metadata.remove(key);
            blockIndex.dropVersionsOtherThan(key, null);
        } else {
            metadata.put(key, new MetaEntry(now, clock.nanoTime(), true));
            blockIndex.dropVersionsOtherThan(key, now.etag());
        }
    }

    /**
     * The store's answer becomes the key's metadata. A write that failed may still have replaced the object
     * (a store that kept other bytes, a connection lost after the store took the body): what was known of the
     * key is forgotten, so the next read asks the store, never promising a size from before.
     */
    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        ObjectMeta meta;
        try {
            meta = delegate.put(key, body);
        } catch (IOException | RuntimeException e) {
            invalidate(key, null);
            throw e;
        }
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
        ObjectMeta meta;
        try {
            meta = multipart().completeMultipart(upload, parts);
        } catch (IOException | RuntimeException e) {
            invalidate(upload.key(), null);
            throw e;
        }
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
            runs.close();
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
        runs.close();
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
