package dev.ferry.cache;

import dev.ferry.cache.policy.EvictionPolicy;
import dev.ferry.store.ByteRange;
import dev.ferry.store.FileRegionReadable;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local tier's engine: blocks of objects in a folder on local disk ({@link CacheLayout}), read, fetched and
 * kept. {@link CachingStore}, the {@link ObjectStore} over it, deals in requests and objects' metadata; this deals
 * in blocks of versions it is told of.
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>Blocks.</b> Objects are cached in aligned blocks of {@code blockSize}; a read is served block by
 *       block, and the missing blocks of a read are fetched with one upstream ranged GET per run of adjacent
 *       misses (at most {@code maxRunBlocks}), streamed: the reader gets the first block while the run is
 *       still arriving.
 *   <li><b>Single flight, stream-through.</b> A block being fetched is a {@link BlockFill} in the fetcher's
 *       {@code inflight}: its bytes go to its temporary file as they arrive, and the reader that asked for it and
 *       every other reader of it read them there as they arrive, not when the block is complete. A reader's run is
 *       fetched on a thread of its own at the pace of upstream and the disk, so a reader that stops reading holds
 *       no bytes in memory and holds back neither the fetch nor the block's other readers. A block is renamed
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
 *   <li><b>Checked before they leave.</b> Every path by which cached bytes leave (a {@link BlockStream}, the
 *       sendfile path {@link #openResident}) goes through {@link ResidentBlocks}, which asks {@link BlockCheck}
 *       first: under the default {@link VerifyMode#ON_LOAD} a block is read back and checked against its CRC32C
 *       unless its bytes are provably those last checked (same file, unchanged; pages never left the page cache).
 *       Bytes read from a fetch under way are the ones it wrote, and are not checked; once the block is in place
 *       its readers read it back from its file, unchecked only while they provably are still those bytes
 *       ({@link BlockCheck#trustedAsFetched}; on a file system whose ctime shows every change after a stat, the
 *       same holds for any reader of a block just fetched, the read-ahead's included: {@link BlockCheck#probeCtime}).
 *   <li><b>Faults degrade service, never data.</b> An unusable folder or a failing write turns the cache
 *       into a pass-through (with a warning and a count); a block failing its check is dropped and fetched
 *       again.
 * </ul>
 *
 * <h2>The parts</h2>
 * As Trino's cache file system and Kafka's remote index cache are arranged: {@link CacheRecovery} (what is on disk
 * at open, the snapshot at close), {@link BlockIndex} (entries, pins, reservations, eviction under its lock, the
 * policy calls), {@link BlockFetcher} (single flight, runs of misses, publishing, prefetch), {@link ResidentBlocks}
 * (resident blocks leaving the disk, checked), {@link BypassReads} (the bytes of refused blocks) and
 * {@link BlockStream} (one reader's range, block by block, from its sources). Here remain the folder's lock, the
 * open and the close.
 *
 * <p>Thread-safe: the index and the policy are guarded by the {@link BlockIndex}'s one lock, held only for
 * bookkeeping; all I/O happens outside it. Blocks being fetched are claimed in the fetcher's concurrent map (the
 * first to put a block fetches it), counts are {@link CacheCounters}; the folder's lock is taken in the
 * constructor and released once, at close.
 */
final class BlockCache {
    private static final Logger LOG = LoggerFactory.getLogger(BlockCache.class);
    private static final int OPEN_FILES = 512;
    private static final int UNSYNCED_BACKLOG = 4096;

    private final CacheConfig config;
    private final CacheLayout layout;
    private final CacheCounters counters = new CacheCounters();
    private final OpenFiles openFiles = new OpenFiles(OPEN_FILES);
    private final UnsyncedBlocks unsynced = new UnsyncedBlocks(UNSYNCED_BACKLOG);
    private final BlockIndex blockIndex;
    private final BlockFetcher fetcher;
    private final ResidentBlocks resident;
    private final BypassReads bypass;
    /** What every {@link BlockStream} reads through. */
    private final BlockStream.Parts readers;
    private volatile ReadObserver observer;
    /** Keys whose whole object is being prefetched by one GET not answered yet: readers wait for it rather than GET it too. */
    private final Map<ObjectKey, CompletableFuture<Void>> wholePrefetches = new ConcurrentHashMap<>();
    private final BlockCheck check;
    private FileChannel lockChannel;
    private FileLock fileLock;
    private volatile boolean passThrough;
    private volatile boolean inUseElsewhere;

    /**
     * Opens the cache in {@code config}'s folder (locking it, and recovering what is there), keeping what
     * {@code policy} admits of {@code upstream}'s objects; {@code onVersionChanged} is told when upstream refuses a
     * fetch pinned to an ETag (the object changed). A folder that cannot be used makes a pass-through.
     */
    BlockCache(ObjectStore upstream, CacheConfig config, EvictionPolicy<BlockId> policy, Clock clock, Consumer<ObjectKey> onVersionChanged) {
        this.config = config;
        this.layout = new CacheLayout(config.dir());
        this.blockIndex = new BlockIndex(config, layout, policy, counters, path -> {
            openFiles.forget(path);
            unsynced.forget(path);
        }, clock);
        this.check = new BlockCheck(config.verify(), counters, clock);
        ReadObserver reads = new ReadObserver() {
            @Override
            public void onRead(ObjectMeta meta, long first, long last) {
                ReadObserver o = observer;
                if (o != null) {
                    o.onRead(meta, first, last);
                }
            }

            @Override
            public void onMiss(ObjectMeta meta, long first) {
                missed(meta, first);
            }
        };
        this.fetcher = new BlockFetcher(config, layout, upstream, blockIndex, counters, check, unsynced, onVersionChanged,
                fetch -> Thread.ofVirtual().name("ferry-fetch").start(fetch), clock);
        this.resident = new ResidentBlocks(config, blockIndex, counters, openFiles, check, reads);
        this.bypass = new BypassReads(upstream, layout, counters, config.blockSize(), onVersionChanged);
        this.readers = new BlockStream.Parts(config, counters, blockIndex, fetcher, resident, bypass, reads, wholePrefetches);
        try {
            open();
        } catch (IOException | UncheckedIOException | OverlappingFileLockException | SecurityException e) {
            LOG.warn("cache directory {} is unusable ({}); serving every read from upstream", config.dir(), e.getMessage());
            passThrough = true;
            inUseElsewhere = e instanceof InUse || e instanceof OverlappingFileLockException;
            blockIndex.stopReserving();
            releaseLock();
        }
    }

    private void open() throws IOException {
        Files.createDirectories(layout.blocks());
        Files.createDirectories(layout.tmp());
        lockChannel = FileChannel.open(layout.lock(), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        fileLock = lockChannel.tryLock();
        if (fileLock == null) {
            throw new InUse();
        }
        check.probeCtime(layout.tmp());
        blockIndex.load(new CacheRecovery(layout).recover(counters.evictedCorrupt::increment));
    }

    /** True when the folder could not be used: nothing is kept, and the store above forwards every read upstream. */
    boolean isPassThrough() {
        return passThrough;
    }

    /** True when the folder could not be used because another cache (in this process or another) holds its lock. */
    boolean inUseElsewhere() {
        return inUseElsewhere;
    }

    /** The folder's lock is held by another cache. */
    private static final class InUse extends IOException {
        private static final long serialVersionUID = 1L;

        InUse() {
            super("another cache (a ferry daemon or mount, in this process or another) has it open");
        }
    }

    CacheCounters counters() {
        return counters;
    }

    CacheStats stats() {
        BlockIndex.Usage usage = blockIndex.usage();
        return counters.stats(usage.blocks(), usage.bytes(), passThrough);
    }

    /** Sets the one observer of reads (the sequential read-ahead); null for none. */
    void observeReads(ReadObserver observer) {
        this.observer = observer;
    }

    /** A reader's read of {@code meta} went to the store from block {@code first}: the observer is told. */
    void missed(ObjectMeta meta, long first) {
        ReadObserver o = observer;
        if (o != null) {
            o.onMiss(meta, first);
        }
    }

    /** True when the block is on disk or being fetched: nothing for a prefetcher to do. */
    boolean residentOrInFlight(BlockId id) {
        return fetcher.residentOrInFlight(id);
    }

    /** See {@link #wholePrefetches}: {@link ColdReads} registers its whole-object prefetches here. */
    Map<ObjectKey, CompletableFuture<Void>> wholePrefetches() {
        return wholePrefetches;
    }

    /** True when a block of {@code key} at {@code index} is resident or being fetched, of any version. */
    boolean holdsAnyVersionAt(ObjectKey key, long index) {
        return blockIndex.holdsAnyVersionAt(key, index);
    }

    /** {@code etag} is {@code key}'s version now (null: the key is gone): the blocks of others go, but for pinned versions. */
    void dropVersionsOtherThan(ObjectKey key, String etag) {
        blockIndex.dropVersionsOtherThan(key, etag);
    }

    /** Keeps {@code meta}'s version readable from its resident blocks until {@link #unpinVersion}; see {@link VersionPins}. */
    void pinVersion(ObjectMeta meta) {
        blockIndex.pinVersion(meta);
    }

    void unpinVersion(ObjectMeta meta) {
        blockIndex.unpinVersion(meta);
    }

    /** The metadata of a pinned version of {@code key}; null when {@code etag} is not pinned. */
    ObjectMeta pinnedMeta(ObjectKey key, String etag) {
        return blockIndex.pinnedMeta(key, etag);
    }

    /** {@code range} of version {@code meta}, read block by block: hits from disk, misses fetched (single flight). */
    InputStream read(ObjectMeta meta, ByteRange range) {
        return new BlockStream(readers, meta, range);
    }

    /**
     * {@link #read}, over {@code answer}: a ranged GET upstream that starts at block {@code first}, sent before the
     * version was known (a miss's one request, whose answer named it). Its blocks fill as a reader's run would
     * ({@link BlockFetcher#claimOpened}); when its first block is being fetched by another reader, the read goes on
     * as any read; when the policy refuses it, the bytes this read wants of it come from the answer at hand and are
     * kept nowhere. The answer is this method's: handed to the run, or closed.
     */
    InputStream readAnswer(ObjectMeta meta, ByteRange range, ObjectContent answer, long first) throws IOException {
        long blockSize = config.blockSize();
        boolean handedOver = false;
        try {
            if (answer.range() == null || answer.range().offset() != first * blockSize) {
                return read(meta, range);
            }
            BlockFetcher.Claim claim = fetcher.claimOpened(meta, first, (range.end() - 1) / blockSize, answer, false);
            if (claim.outcome() == BlockFetcher.Claim.Outcome.STARTED) {
                handedOver = true;
                fetcher.start(claim.run());
                return new BlockStream(readers, meta, range, claim.run());
            }
            if (claim.outcome() == BlockFetcher.Claim.Outcome.REFUSED) {
                // the policy keeps none of it: the bytes this read wants of the first block, from the answer at hand
                long blockEnd = Math.min(meta.size(), (first + 1) * blockSize);
                answer.stream().skipNBytes(range.offset() - first * blockSize);
                BlockSource bytes = bypass.readFrom(meta, answer.stream(), range.offset(), Math.min(range.end(), blockEnd), first * blockSize);
                return new BlockStream(readers, meta, range, null, bytes);
            }
            return read(meta, range);
        } finally {
            if (!handedOver) {
                answer.close();
            }
        }
    }

    /**
     * Fetches ahead of readers: the blocks of {@code range} that are neither resident nor being fetched, kept when
     * the policy admits them (refused blocks are skipped, never fetched). Resident blocks are not touched and no hit
     * or miss is counted: a prefetch is not an access; its blocks count as prefetched. Returns the bytes fetched.
     */
    long prefetch(ObjectMeta meta, ByteRange range) throws IOException {
        return fetcher.prefetch(meta, range);
    }

    /**
     * {@link #prefetch}, starting with {@code answer} (as {@link #readAnswer} reads one), fetched on this thread; 0
     * when the answer does not start at block {@code first}. The answer is this method's. {@code claimed} runs once
     * the answer's blocks are claimed (or it is known they will not be), before they are fetched: from then on a
     * reader finds them in flight.
     */
    long prefetchAnswer(ObjectMeta meta, ByteRange range, ObjectContent answer, long first, Runnable claimed) throws IOException {
        long blockSize = config.blockSize();
        BlockFetcher.Run run = null;
        try {
            if (answer.range() == null || answer.range().offset() != first * blockSize) {
                return 0;
            }
            BlockFetcher.Claim claim = fetcher.claimOpened(meta, first, (range.end() - 1) / blockSize, answer, true);
            run = claim.outcome() == BlockFetcher.Claim.Outcome.STARTED ? claim.run() : null;
        } finally {
            claimed.run();
            if (run == null) {
                answer.close();
            }
        }
        return (run == null ? 0 : run.fetch()) + fetcher.prefetch(meta, range); // run.fetch closes the answer
    }

    /**
     * {@code range} of {@code meta} as regions of block files, when every block is resident and may leave as it is
     * on disk; null otherwise. See {@link ResidentBlocks#regions}.
     */
    List<FileRegionReadable.Region> openResident(ObjectMeta meta, ByteRange range, boolean mayCheck) throws IOException {
        return resident.regions(meta, range, mayCheck);
    }

    /** The tier's contents, listed and dropped by bucket and prefix. */
    TierContents contents() {
        return new TierContents(blockIndex, config.capacity());
    }

    /** Stops the fetches, fsyncs the blocks and writes the index snapshot (the clean-shutdown marker), releases the folder. */
    void close() {
        blockIndex.stopReserving();
        fetcher.close();
        if (!passThrough && !unsynced.syncAll()) {
            LOG.warn("cannot fsync every cached block; no index snapshot, so the next start checks the blocks it finds");
        } else if (!passThrough) {
            try {
                new CacheRecovery(layout).writeSnapshot(blockIndex.readyEntries());
            } catch (IOException e) {
                LOG.warn("cannot write the cache index snapshot ({}); the next start rebuilds it from the blocks", e.getMessage());
            }
        }
        releaseLock();
        openFiles.closeAll();
    }

    /** Leaves as a crash would: no snapshot, lock released. For tests of recovery. */
    void abandon() {
        blockIndex.stopReserving();
        fetcher.close();
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
