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
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * The local tier: an {@link ObjectStore} that keeps blocks of the objects read through it in a local
 * directory, in front of an upstream store. A wrapper, as Trino's cache file system is one: it answers requests
 * from what it knows of each object ({@link MetadataCache}) and reads the bytes through its engine, a
 * {@link BlockCache} of blocks on local disk, where the design of the blocks (single flight, capacity, crash
 * safety, checks before bytes leave) is told.
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>Identity.</b> A block belongs to (bucket, key, ETag, index), and every upstream fetch is pinned
 *       to that ETag with If-Match, so bytes of one version are never served as another. When the upstream
 *       shows a new ETag, blocks of other versions are dropped.
 *   <li><b>A miss is one request.</b> A read whose metadata is unknown sends one ranged GET of the run of
 *       blocks it starts in, with no HEAD before it: the answer names the version and fills the blocks. One
 *       such miss per key at a time; the key's other readers wait for its answer ({@link ColdReads}).
 *   <li><b>Metadata</b> is trusted within the metadata TTL, served stale within twice it while revalidated in
 *       the background, and replaced at once by a write through ferry ({@link MetadataCache}).
 *   <li><b>Writes go through</b>, and what the store answers becomes the key's metadata.
 *   <li><b>Faults degrade service, never data.</b> An unusable directory turns the cache into a pass-through
 *       (with a warning), forwarding every request upstream.
 * </ul>
 *
 * <p>Thread-safe: the metadata, the misses ({@link ColdReads}) and the engine guard themselves.
 */
public final class CachingStore extends ForwardingObjectStore {
    private final Clock clock;
    private final CacheConfig config;
    private final BlockCache blocks;
    private final MetadataCache metadata;
    private final ColdReads misses;
    private volatile boolean closed;

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

    /** ... revalidating stale metadata in the background on {@code revalidators} (see {@link MetadataCache}). */
    public CachingStore(ObjectStore upstream, CacheConfig config, EvictionPolicy<BlockId> policy, Clock clock, Executor revalidators) {
        super(upstream);
        Objects.requireNonNull(revalidators, "revalidators is null");
        this.config = Objects.requireNonNull(config, "config is null");
        this.clock = Objects.requireNonNull(clock, "clock is null");
        this.blocks = new BlockCache(upstream, config, Objects.requireNonNull(policy, "policy is null"), clock, this::versionChanged);
        this.metadata = new MetadataCache(upstream, config.metadataTtl(), clock, blocks.counters(), revalidators, blocks::dropVersionsOtherThan);
        this.misses = new ColdReads(upstream, config, clock, blocks, metadata);
    }

    /** A fetch pinned to the key's ETag was refused: the object changed, and its next read asks upstream. */
    private void versionChanged(ObjectKey key) {
        metadata.changed(key);
    }

    /** What the tier holds, listed and dropped by bucket and prefix (rarely used: kept apart from reads and writes). */
    public TierContents contents() {
        return blocks.contents();
    }

    /** The clock the tier times with: a {@link TierLedger}'s arrivals are by it. */
    public Clock clock() {
        return clock;
    }

    public CacheConfig config() {
        return config;
    }

    /** True when the cache could not use its directory and forwards every read upstream. */
    public boolean isPassThrough() {
        return blocks.isPassThrough();
    }

    /** True when it is a pass-through because another cache (a daemon or a mount) holds its folder. */
    public boolean inUseElsewhere() {
        return blocks.inUseElsewhere();
    }

    /** Sets the one observer of reads (the sequential read-ahead); null for none. */
    void observeReads(ReadObserver observer) {
        blocks.observeReads(observer);
    }

    /** True when the block is on disk or being fetched: nothing for a prefetcher to do. */
    public boolean residentOrInFlight(BlockId id) {
        return blocks.residentOrInFlight(id);
    }

    /** What the cache has done so far. */
    public CacheStats stats() {
        return blocks.stats();
    }

    /**
     * Tells {@code ledger} (from now on, in place of the last one) where the bytes of every read come from and of
     * every block fetched; {@link TierLedger#NONE} stops telling.
     */
    public void ledger(TierLedger ledger) {
        blocks.counters().ledger = ledger;
    }

    // ---- metadata ------------------------------------------------------------------------------------

    /**
     * The object's metadata when the cache knows it and it is still fresh (within the metadata TTL), without
     * asking upstream; null otherwise. For callers that must not block (a server's event loop).
     */
    public ObjectMeta freshMeta(ObjectKey key) {
        return isPassThrough() ? null : metadata.fresh(key);
    }

    /** Versions trusted without asking upstream until {@link #close}d ({@link #trustVersions}). */
    public static final class TrustedVersions implements AutoCloseable {
        private final int size;
        private final Runnable release;
        private boolean released;

        private TrustedVersions(int size, Runnable release) {
            this.size = size;
            this.release = release;
        }

        /** How many objects this vouches for. */
        public int size() {
            return size;
        }

        @Override
        public synchronized void close() {
            if (!released) {
                released = true;
                release.run();
            }
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
        metadata.trust(copy);
        return new TrustedVersions(copy.size(), () -> metadata.untrust(copy));
    }

    /**
     * Metadata a listing gave (a LIST names each object's size and ETag), remembered as a HEAD's answer would
     * be, fresh for the metadata TTL: a reader of a listed object then sends no HEAD before its GET. An entry
     * that is still fresh is kept (a HEAD or a write since the LIST was sent may be newer than the listing).
     */
    public void listed(ObjectMeta meta) {
        if (!isPassThrough()) {
            metadata.listed(meta);
        }
    }

    /**
     * {@link #listed}, only when the cache holds no metadata for the key at all: a read that names a version it
     * was told elsewhere then sends no HEAD, and can never make an older version current over a newer one.
     */
    public void listedIfUnknown(ObjectMeta meta) {
        if (!isPassThrough()) {
            metadata.listedIfUnknown(meta);
        }
    }

    /**
     * {@code meta}, as {@link #head} answered it, with the object's checksum where the store keeps one: when the cache's
     * metadata came from a listing or from a miss's ranged GET (neither names a checksum), a HEAD asks for it, and its
     * answer becomes the key's metadata. For a client asking for the checksum ({@code x-amz-checksum-mode}): with
     * {@code wait} (a HEAD's, whose answer is the metadata) this asks now; without (a read, which must not wait on
     * it, and may be on an event loop) it returns {@code meta} as it is and asks in the background.
     */
    public ObjectMeta withChecksum(ObjectKey key, ObjectMeta meta, boolean wait) throws IOException {
        return isPassThrough() ? meta : metadata.withChecksum(key, meta, wait);
    }

    /** The metadata the cache holds for {@code key} when it is version {@code etag}, however old; null otherwise. */
    public ObjectMeta knownMeta(ObjectKey key, String etag) {
        return isPassThrough() ? null : metadata.known(key, etag);
    }

    private ObjectMeta resolve(ObjectKey key, String ifMatch) throws IOException {
        ObjectMeta known = local(key, ifMatch);
        return known != null ? known : metadata.ask(key, ifMatch);
    }

    /** The version a request carries, else {@link #local}'s answer for it. */
    private ObjectMeta known(GetRequest request) {
        return request.version() != null ? request.version() : local(request.key(), request.ifMatch());
    }

    /** The metadata a read may go on with without asking upstream: servable, named by If-Match, or pinned; null otherwise. */
    private ObjectMeta local(ObjectKey key, String ifMatch) {
        ObjectMeta known = metadata.usable(key, ifMatch);
        if (known == null && ifMatch != null) {
            return blocks.pinnedMeta(key, ifMatch); // a pinned version, perhaps superseded: its resident blocks still serve it
        }
        return known;
    }

    // ---- version pins --------------------------------------------------------------------------------

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
        blocks.pinVersion(meta);
        return new VersionPin(meta, () -> blocks.unpinVersion(meta));
    }

    // ---- reads ---------------------------------------------------------------------------------------

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        if (isPassThrough()) {
            return delegate.head(key);
        }
        return resolve(key, null);
    }

    /**
     * The object's metadata for a file system's lookup, which a read of the file usually follows: what the tier may
     * go on with ({@link #head}'s answer without a request); otherwise, unless the last miss in the key's folder
     * found an object larger than a block, one ranged GET of the first block, whose answer is the metadata and whose
     * bytes stay in the tier, so that a small file's lookup and its read cost one request between them, not a HEAD
     * and a GET. The block counts as prefetched (the read then finds it: a hit), the lookup as a reader's miss for
     * the folder's read-ahead. A miss of the key under way (a reader's, a folder read-ahead's) is waited for and its
     * answer used. A HEAD when the folder holds large objects, or when no GET was needed or possible (an empty
     * object, a version's first block already held).
     */
    public ObjectMeta lookup(ObjectKey key) throws IOException {
        if (isPassThrough()) {
            return head(key);
        }
        ObjectMeta known = local(key, null);
        if (known != null) {
            return known;
        }
        if (!closed && misses.mayHoldSmallObjects(key)) {
            long fetched = misses.lookup(new GetRequest(key, ByteRange.of(0, config.blockSize()), null));
            ObjectMeta meta = local(key, null); // its answer's, or the answer of the miss it waited for
            if (meta != null) {
                if (fetched > 0) {
                    blocks.missed(meta, 0);
                }
                return meta;
            }
        }
        return metadata.ask(key, null);
    }

    /**
     * A read through the tier. One that may go only to local disk ({@link GetRequest#cachedOnly}) is answered when
     * every block it touches is resident and its bytes may leave as they are on disk, as regions of the block files
     * ({@link dev.ferry.store.FileRegionReadable}: a server sends them file-to-socket, a reader copies them), and is
     * null otherwise: a block {@link BlockCheck} does not trust is checked first under {@link GetRequest.Reach#CACHED}
     * and makes it null under {@link GetRequest.Reach#CACHED_NOW} (the caller tries again where it may block); one
     * that fails its check is dropped (the caller's next read fetches it again). Under {@link VerifyMode#ALWAYS} such a
     * read is always null: every read is served from a copy checked in memory. The metadata a request carries
     * ({@link GetRequest#version}) is used as it is, not looked up again.
     */
    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        if (request.cachedOnly()) {
            return getResident(request);
        }
        if (isPassThrough()) {
            blocks.counters().upstreamRequests.increment();
            return delegate.get(new GetRequest(request.key(), request.range(), request.ifMatch())); // as asked, in parallel ranges
        }
        ObjectMeta meta = known(request);
        if (meta == null) {
            ObjectContent opened = misses.open(request);
            if (opened != null) {
                return opened;
            }
            meta = local(request.key(), request.ifMatch()); // another reader's miss of the key may have answered
        }
        if (meta == null) {
            meta = metadata.ask(request.key(), request.ifMatch());
        }
        ByteRange range = ReadRange.of(request, meta);
        if (range == null) {
            return new ObjectContent(meta, null, InputStream.nullInputStream());
        }
        return new ObjectContent(meta, range, blocks.read(meta, range));
    }

    private ObjectContent getResident(GetRequest request) throws IOException {
        if (isPassThrough() || closed || config.verify() == VerifyMode.ALWAYS) {
            return null;
        }
        ObjectMeta meta = known(request);
        ByteRange range = meta == null ? null : ReadRange.of(request, meta);
        if (range == null) {
            return null;
        }
        List<dev.ferry.store.FileRegionReadable.Region> regions = blocks.openResident(meta, range, request.reach() == GetRequest.Reach.CACHED);
        return regions == null ? null : new ObjectContent(meta, range, new ResidentStream(regions));
    }

    /**
     * Fetches ahead of readers: the blocks of the request's range that are neither resident nor being
     * fetched, kept when the policy admits them (refused blocks are skipped, never fetched). Resident blocks
     * are not touched and no hit or miss is counted: a prefetch is not an access; its blocks count as
     * prefetched. Returns the bytes fetched.
     */
    public long prefetch(GetRequest request) throws IOException {
        return prefetch(request, true);
    }

    /**
     * Fetches ahead an object a listing named ({@code listed}: its key, size and ETag), whole, as a reader's miss of
     * it in a folder of small objects would: one GET of the whole object asking for its checksum (a store names one
     * for no range), pinned to the ETag, when the cache does not know the key; its blocks as any prefetch's when it
     * does. Nothing, rather than a HEAD, when a reader's miss of it is under way or another version is held: that
     * is the reader's to settle. The bytes fetched.
     */
    public long prefetchListed(ObjectMeta listed) throws IOException {
        return listed.size() == 0 ? 0 : prefetch(new GetRequest(listed.key(), null, listed.etag(), true), false);
    }

    /** See {@link #prefetch(GetRequest)}; when the miss path sends nothing, a HEAD settles the version only if {@code ask}. */
    private long prefetch(GetRequest request, boolean ask) throws IOException {
        if (isPassThrough() || closed) {
            return 0;
        }
        ObjectMeta meta = local(request.key(), request.ifMatch());
        if (meta == null) {
            long fetched = misses.prefetch(request, ask);
            if (fetched >= 0 || !ask) {
                return Math.max(0, fetched); // a listed object's miss under way is the reader's to settle
            }
            meta = local(request.key(), request.ifMatch()); // the miss of the key it waited for may have answered
            if (meta == null) {
                meta = metadata.ask(request.key(), request.ifMatch());
            }
        }
        ByteRange range = ReadRange.of(request, meta);
        if (range == null) {
            return 0;
        }
        return blocks.prefetch(meta, range);
    }

    /** {@link #prefetch(GetRequest)} of one block, pinned to its version: the bytes fetched. */
    public long prefetch(BlockId block) throws IOException {
        long start = block.index() * config.blockSize();
        return prefetch(new GetRequest(block.key(), ByteRange.of(start, config.blockSize()), block.etag()));
    }

    // ---- writes go through, and invalidate --------------------------------------------------------------

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
            metadata.written(key, null);
            throw e;
        }
        metadata.written(key, meta);
        return meta;
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        delegate.delete(key);
        metadata.written(key, null);
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        ObjectMeta meta;
        try {
            meta = multipart().completeMultipart(upload, parts);
        } catch (IOException | RuntimeException e) {
            metadata.written(upload.key(), null);
            throw e;
        }
        metadata.written(upload.key(), meta);
        return meta;
    }

    // ---- shutdown -------------------------------------------------------------------------------------

    /** Writes the index snapshot (the clean-shutdown marker), releases the directory, closes upstream. */
    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            metadata.close();
            blocks.close();
        }
        super.close();
    }

    /** Leaves as a crash would: no snapshot, lock released. For tests of recovery. */
    void abandonWithoutSnapshot() {
        closed = true;
        metadata.close();
        blocks.abandon();
    }
}
