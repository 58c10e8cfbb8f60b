package dev.ferry.cache;

import dev.ferry.store.BoundedInputStream;
import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads of objects whose metadata the local tier does not know (or must ask again): a miss is one request, a ranged
 * GET of the run of blocks the read starts in, with no HEAD before it. Its answer names the version and becomes the
 * key's metadata ({@link MetadataCache#answered}), and its bytes fill the blocks ({@link BlockCache#readAnswer}).
 * One miss per key at a time: the key's other readers wait for its answer, then read as readers of known metadata.
 *
 * <p>Thread-safe: misses under way are claimed in a concurrent map, one per key.
 */
final class ColdReads {
    private final ObjectStore upstream;
    private final CacheConfig config;
    private final Clock clock;
    private final BlockCache blocks;
    private final MetadataCache metadata;
    /** Folders kept in {@link #smallFolders}; past it the map starts again. */
    static final int FOLDERS_KEPT = 100_000;

    /** ColdReads being asked upstream with no metadata known: one per key, the rest wait for its answer. */
    private final ConcurrentHashMap<ObjectKey, CompletableFuture<Void>> opening = new ConcurrentHashMap<>();
    /** Per folder ({@link MetadataCache#folderOf}), whether the last object a miss found in it fit in one block. */
    private final ConcurrentHashMap<String, Boolean> smallFolders = new ConcurrentHashMap<>();

    ColdReads(ObjectStore upstream, CacheConfig config, Clock clock, BlockCache blocks, MetadataCache metadata) {
        this.upstream = upstream;
        this.config = config;
        this.clock = clock;
        this.blocks = blocks;
        this.metadata = metadata;
    }

    /** False when the last miss in {@code key}'s folder found an object larger than a block; true otherwise (small, or none yet). */
    boolean mayHoldSmallObjects(ObjectKey key) {
        return !Boolean.FALSE.equals(smallFolders.get(MetadataCache.folderOf(key)));
    }

    /**
     * A file system's lookup of a key the cache does not know ({@link CachingStore#lookup}): a miss of it under way is
     * waited for (its answer is the metadata: 0), else the request's blocks are fetched as a prefetch's, whose answer
     * is the metadata. The bytes fetched; -1 having sent nothing.
     */
    long lookup(GetRequest request) throws IOException {
        CompletableFuture<Void> other = opening.get(request.key());
        if (other != null) {
            other.join();
            return 0;
        }
        return prefetch(request, true);
    }

    /**
     * The read as one request upstream, when no other miss of its key is under way; null when the caller should
     * look at the key's metadata again (another reader's miss answered it: this waited for it) or ask with a HEAD
     * (see {@link #openMiss}).
     */
    ObjectContent open(GetRequest request) throws IOException {
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> other = opening.putIfAbsent(request.key(), mine);
        if (other != null) {
            other.join(); // one miss of a key at a time: its answer is the metadata, its blocks are in flight
            return null;
        }
        try {
            return openMiss(request);
        } finally {
            opening.remove(request.key(), mine);
            mine.complete(null);
        }
    }

    /**
     * A prefetch of an object whose metadata the cache does not know, as {@link #open} reads one: one
     * ranged GET (pinned to the request's If-Match, a plan's ETag) whose answer is the metadata, its run fetched on
     * this thread, then the rest of the range as any prefetch. A request for the whole object that asks for its
     * checksum ({@link GetRequest#checksumAnswerable}: an object a listing named small) is one GET of the whole
     * object asking for it, as a reader's miss in a folder of small objects. A miss of the key under way (a reader's,
     * another prefetch's) is waited for when {@code waitForOther} (else left to it). -1, having sent nothing or been
     * answered 416: the caller looks at the key's metadata again (a miss waited for answered it), else asks with a HEAD.
     */
    long prefetch(GetRequest request, boolean waitForOther) throws IOException {
        ObjectKey key = request.key();
        long first = request.range() == null ? 0 : request.range().offset() / config.blockSize();
        if (blocks.holdsAnyVersionAt(key, first)) {
            return -1;
        }
        // a reader's miss of the key waits for this one's answer, as for another reader's, rather than GET the same
        // bytes again (the second answer would be dropped, and what the store sent of it paid for): until the
        // answer's blocks are claimed, then it reads them as they arrive (a whole object's: until it is fetched)
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> other = opening.putIfAbsent(key, mine);
        if (other != null) {
            if (waitForOther) {
                other.join(); // a reader's miss (or another prefetch) of the key: its answer is the metadata, its blocks in flight
            }
            return -1;
        }
        boolean whole = request.checksumAnswerable();
        if (whole) {
            blocks.wholePrefetches().put(key, mine); // one block at most: so does a read whose metadata is known (a mount's listed file)
        }
        Runnable claimed = () -> {
            if (!whole) {
                opening.remove(key, mine);
                mine.complete(null);
            }
        };
        try {
            return prefetchMiss(request, first, whole, claimed);
        } finally {
            blocks.wholePrefetches().remove(key, mine);
            opening.remove(key, mine);
            mine.complete(null);
        }
    }

    private long prefetchMiss(GetRequest request, long first, boolean whole, Runnable claimed) throws IOException {
        long sent = clock.nanoTime();
        ObjectContent answer = missGet(request, first, whole);
        if (answer == null) {
            return -1;
        }
        ObjectMeta meta = answer.meta();
        metadata.answered(meta, sent, whole);
        ByteRange range = request.range() == null ? (meta.size() == 0 ? null : ByteRange.of(0, meta.size())) : request.range().clip(meta.size());
        if (whole && answer.range() != null) {
            range = answer.range(); // the first block only, when the object turned out larger
        }
        if (range == null) {
            answer.close();
            return 0;
        }
        return blocks.prefetchAnswer(meta, range, answer, first, claimed);
    }

    /**
     * A miss's one request: a ranged GET of the run of blocks from {@code first} the read wants (at most a run),
     * pinned to the request's If-Match; null when upstream answers 416 (an empty object, or a read past its end).
     * A key upstream does not have is forgotten here, its blocks dropped.
     *
     * <p>With {@code whole} (a read of the whole object that asks for its checksum, in a folder whose last missed
     * object fit in one block), a GET of the whole object asking for its checksum instead: a store names a checksum
     * for no range, so the client is answered it at once and no HEAD is sent for it later. Should the object be
     * larger than a block after all, its first block is read from that answer and the rest is left unsent (the
     * connection is dropped, costing what was in flight), read as any object's later blocks are. A folder of
     * small files, the commonest dataset there is, so costs one GET an object and no HEAD; where objects are
     * large, a ranged GET is sent and the checksum is asked for by one HEAD, off the read path, which costs far
     * less than the bytes in flight when a whole large object's answer is cut short.
     */
    private ObjectContent missGet(GetRequest request, long first, boolean whole) throws IOException {
        ObjectKey key = request.key();
        long blockSize = config.blockSize();
        long wanted = request.range() == null ? Long.MAX_VALUE : (request.range().end() - 1) / blockSize;
        long last = first + Math.min(wanted - first, config.maxRunBlocks() - 1);
        try {
            blocks.counters().upstreamRequests.increment();
            ObjectContent answer = upstream.get(whole ? new GetRequest(key, null, request.ifMatch(), true)
                    : new GetRequest(key, ByteRange.of(first * blockSize, (last - first + 1) * blockSize), request.ifMatch()));
            if (smallFolders.size() >= FOLDERS_KEPT) {
                smallFolders.clear();
            }
            smallFolders.put(MetadataCache.folderOf(key), answer.meta().size() <= blockSize);
            if (whole && answer.range() != null && answer.range().length() > blockSize) {
                return new ObjectContent(answer.meta(), ByteRange.of(0, blockSize), new BoundedInputStream(answer.stream(), blockSize));
            }
            return answer;
        } catch (ObjectNotFoundException e) {
            metadata.forget(key);
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
     * blocks as a reader's run would ({@link BlockCache#readAnswer}). Null, having sent nothing, when the key's
     * known version has its first block on disk (a HEAD costs less than a GET of bytes the cache holds), and
     * null when upstream answers 416 (an empty object, where a store answers a ranged GET so, or a read past
     * the end): then the caller asks with a HEAD.
     */
    private ObjectContent openMiss(GetRequest request) throws IOException {
        long first = request.range() == null ? 0 : request.range().offset() / config.blockSize();
        if (blocks.holdsAnyVersionAt(request.key(), first)) {
            return null; // perhaps the bytes wanted: a HEAD says whether they still are
        }
        long sent = clock.nanoTime();
        boolean whole = request.checksumAnswerable() && Boolean.TRUE.equals(smallFolders.get(MetadataCache.folderOf(request.key())));
        ObjectContent answer = missGet(request, first, whole);
        if (answer == null) {
            return null;
        }
        ObjectMeta meta = answer.meta();
        metadata.answered(meta, sent, whole);
        ByteRange range;
        try {
            range = ReadRange.of(request, meta);
        } catch (StoreException e) {
            answer.close();
            throw e;
        }
        if (range == null) {
            answer.close();
            return new ObjectContent(meta, null, InputStream.nullInputStream());
        }
        ObjectContent content = new ObjectContent(meta, range, blocks.readAnswer(meta, range, answer, first));
        blocks.missed(meta, first);
        return content;
    }
}
