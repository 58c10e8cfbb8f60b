package dev.ferry.tier;

import dev.ferry.cache.CachingStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListRequest;
import dev.ferry.store.MultipartOperations;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.writeback.Durability;
import dev.ferry.writeback.FlushResult;
import dev.ferry.writeback.Scratch;
import dev.ferry.writeback.WriteBackStore;
import dev.ferry.writeback.WriteStatus;
import java.io.IOException;
import java.time.Duration;
import java.util.List;

/**
 * The one door to a node's stores: what the daemon's S3 semantics and the mount's file system talk to for objects,
 * and the one place that decides which store answers:
 *
 * <pre>
 * a bucket's reads, lists, deletes -> the scratch bucket (local disk only, never uploaded) | the top of the stack
 * the top of the stack             -> write-back (a key not uploaded yet is read from it) -> local tier -> below it
 * a read that may not fetch        -> the local tier's blocks on disk, or nothing ({@link GetRequest.Reach})
 * a write                          -> scratch | write-back | through the local tier (after write-back's fence, when
 *                                     an earlier write of the key is not uploaded yet)
 * </pre>
 *
 * The local tier's hints (fresh metadata, listed and pinned versions) are behind {@link #hints()}, write-back's
 * state behind {@link #writes()}, as Caffeine keeps the rarely used operations behind {@code policy()}; both answer
 * as they should when the node keeps no local tier or writes through. Immutable; the stores are thread-safe.
 */
public final class NodeStores {
    private final CachingStore cache;
    private final WriteBackStore writeBack;
    private final ObjectStore below;
    private final Scratch scratch;
    private final TierHints hints;
    private final LocalWrites writes;

    /** The door to {@code stack}'s stores ({@link TierStack#door}), with {@code scratch} as the node's scratch bucket (null: none). */
    NodeStores(TierStack stack, Scratch scratch) {
        this(stack.cache(), stack.writeBack(), stack.belowCache(), scratch);
    }

    private NodeStores(CachingStore cache, WriteBackStore writeBack, ObjectStore below, Scratch scratch) {
        this.cache = cache;
        this.writeBack = writeBack;
        this.below = below;
        this.scratch = scratch;
        this.hints = new TierHints(cache);
        this.writes = new LocalWrites(writeBack);
    }

    /** Where reads and writes enter the stack: write-back, else the local tier, else the store under it. */
    public ObjectStore top() {
        return writeBack != null ? writeBack : underWriteBack();
    }

    /** The store write-back uploads to, and writes that go through are made in: the local tier, or the store under it. */
    private ObjectStore underWriteBack() {
        return cache != null ? cache : below;
    }

    /**
     * The store under the local tier: where a conditional write checks the object (the tier's metadata may be up
     * to its TTL old).
     */
    public ObjectStore below() {
        return below;
    }

    /** Where multipart uploads go: the top of the stack, as other writes (the scratch bucket takes none). */
    public MultipartOperations multipart() throws StoreException {
        return MultipartOperations.of(top());
    }

    /** The scratch bucket, or null. */
    public Scratch scratch() {
        return scratch;
    }

    /** True for the scratch bucket: served from local disk only, never from or to the object store. */
    public boolean isScratch(String bucket) {
        return scratch != null && scratch.holds(bucket);
    }

    /** The store a bucket's objects are read, listed and deleted through. */
    public ObjectStore storeFor(String bucket) {
        return isScratch(bucket) ? scratch : top();
    }

    /** True when the object's one copy is on local disk (the scratch bucket's, or a write not uploaded yet). */
    public boolean onlyLocal(ObjectKey key) {
        return isScratch(key.bucket()) || writes.pending(key);
    }

    /** Throws NoSuchBucket, as S3 answers it, when {@code bucket} does not exist: a listing of one key asks. */
    public void requireBucket(String bucket) throws IOException {
        storeFor(bucket).list(new ListRequest(bucket, "", null, null, 1));
    }

    /**
     * A read of an object. One that may go only to local disk ({@link GetRequest#cachedOnly}) is answered from the
     * local tier's blocks when all of them are there, and is null otherwise, and for an object whose one copy is
     * local (read it with {@link GetRequest.Reach#ANYWHERE}: it goes no further than this node).
     */
    public ObjectContent get(GetRequest request) throws IOException {
        if (request.cachedOnly()) {
            return cache == null || onlyLocal(request.key()) ? null : cache.get(request);
        }
        return storeFor(request.key().bucket()).get(request);
    }

    /**
     * The object's metadata for a file system's lookup ({@link CachingStore#lookup}): in a folder of small objects,
     * an unknown key's answer comes with its first block, kept in the local tier for the read that follows, instead
     * of from a HEAD. A key whose one copy is local, and any key on a node with no local tier: a HEAD's answer.
     */
    public ObjectMeta lookup(ObjectKey key) throws IOException {
        return cache == null || onlyLocal(key) ? storeFor(key.bucket()).head(key) : cache.lookup(key);
    }

    /** Whether writes go through write-back, unless the writer asks for them to go through ({@code through}). */
    public boolean writesBack(boolean through) {
        return writeBack != null && !through;
    }

    /**
     * A write as it was acknowledged: the ETag the object has (or will have, in the store), whether it is there, and its
     * write-back sequence (-1: not journaled).
     */
    public record Written(String etag, boolean durable, long sequence) {
        /** A write answered with {@code etag}: durable, or local with no journal sequence (scratch). */
        Written(String etag, boolean durable) {
            this(etag, durable, -1);
        }
    }

    /**
     * Writes {@code key}: in the scratch bucket, on local disk only; through write-back, acknowledged on local disk,
     * unless {@code through}; otherwise through the local tier to the store. A write that goes through while an
     * earlier write of the key is still only local goes the same way as it and waits for write-back's fence
     * (slower, never reordered), failing with 503 when the fence does not hold within {@code fenceTimeout}.
     */
    public Written put(ObjectKey key, PutBody body, boolean through, Duration fenceTimeout) throws IOException {
        if (isScratch(key.bucket())) {
            return new Written(scratch.put(key, body).etag(), false);
        }
        if (writesBack(through)) {
            WriteStatus w = writeBack.write(key, body);
            return new Written(w.etag(), w.durability() == Durability.DURABLE, w.sequence());
        }
        if (writes.pending(key)) {
            writeBack.write(key, body);
            FlushResult fence = writeBack.flush(fenceTimeout);
            if (!fence.complete() || fence.firstError() != null) {
                throw new StoreException(StoreException.Kind.RETRYABLE, 503, "ServiceUnavailable",
                        "the write is kept locally but could not be made durable yet: "
                                + (fence.firstError() != null ? fence.firstError() : "the fence timed out"), null);
            }
            return new Written(top().head(key).etag(), true);
        }
        return new Written(underWriteBack().put(key, body).etag(), true);
    }

    /**
     * Writes {@code key} through write-back so that it reaches the store only after every write under {@code prefix}
     * (of its bucket) acknowledged before it (a checkpoint's metadata after its files); without write-back, or asked
     * {@code through}, as {@link #put}, whose writes are in the store when answered.
     */
    public Written putAfter(ObjectKey key, PutBody body, String prefix, boolean through, Duration fenceTimeout) throws IOException {
        if (isScratch(key.bucket()) || !writesBack(through)) {
            return put(key, body, through, fenceTimeout);
        }
        WriteStatus w = writeBack.writeAfter(key, body, prefix, fenceTimeout);
        return new Written(w.etag(), w.durability() == Durability.DURABLE, w.sequence());
    }

    /**
     * A multipart upload assembled on local disk under write-back: its bytes ({@code body}, a file) were sent in parts
     * of {@code partSizes} and answered {@code etag}, and are uploaded in the same parts, so the store reports that
     * ETag too.
     */
    public Written putParts(ObjectKey key, PutBody body, List<Long> partSizes, String etag) throws IOException {
        if (writeBack == null) {
            throw new IllegalStateException("uploads are assembled locally only under write-back");
        }
        WriteStatus w = writeBack.writeParts(key, body, partSizes, etag);
        return new Written(w.etag(), w.durability() == Durability.DURABLE);
    }

    /** The local tier's hints: metadata it holds fresh, versions listed or pinned (no-ops with no local tier). */
    public TierHints hints() {
        return hints;
    }

    /** Write-back's state: what is acknowledged and not uploaded yet, and its fence (empty when writes go through). */
    public LocalWrites writes() {
        return writes;
    }
}
