package dev.ferry.serve.s3;

import dev.ferry.cache.CachingStore;
import dev.ferry.serve.node.LocalMultipart;
import dev.ferry.store.ListRequest;
import dev.ferry.store.MultipartOperations;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.writeback.Scratch;
import dev.ferry.writeback.WriteBackStore;
import java.io.IOException;

/**
 * The node's stores as the S3 operations reach them, and which of them a request goes to: the scratch bucket's
 * objects live on local disk only, the others at the top of the stack. Immutable; the stores are thread-safe.
 *
 * @param cache          the local tier
 * @param below          the store under the local tier: conditional writes check the object there, not in the
 *                       local tier's metadata (which may be up to its TTL old)
 * @param writeBack      when not null, PUTs are acknowledged once on local disk and uploaded in the background,
 *                       and reads of keys not yet uploaded are served from it
 * @param localMultipart multipart uploads staged on local disk under write-back, or null
 * @param scratch        the node-local scratch bucket, kept on local disk and never uploaded, or null
 */
record Stores(CachingStore cache, ObjectStore below, WriteBackStore writeBack, LocalMultipart localMultipart, Scratch scratch) {
    /** The top of the stack, where reads and writes go: write-back over the local tier, or the local tier. */
    ObjectStore top() {
        return writeBack != null ? writeBack : cache;
    }

    /** Where multipart uploads go: the top of the stack, as other writes (the scratch bucket takes none). */
    MultipartOperations multipart() {
        return writeBack != null ? writeBack : cache;
    }

    /** True for the scratch bucket: served from local disk only, never from or to the object store. */
    boolean isScratch(String bucket) {
        return scratch != null && scratch.holds(bucket);
    }

    /** The store a bucket's objects are read, listed and deleted through. */
    ObjectStore frontFor(String bucket) {
        return isScratch(bucket) ? scratch : top();
    }

    /** True when write-back holds a write of {@code key} not uploaded yet. */
    boolean pendingUpload(ObjectKey key) {
        return writeBack != null && writeBack.holdsLocally(key);
    }

    /** True when the object's one copy is on local disk (the scratch bucket's, or a write not uploaded yet). */
    boolean onlyLocal(ObjectKey key) {
        return isScratch(key.bucket()) || pendingUpload(key);
    }

    /** Whether this request's write goes through write-back (configured, and not refused by {@code x-ferry-write: through}). */
    boolean writesBack(S3Service.Request r) {
        return writeBack != null && !"through".equals(r.headers().get("x-ferry-write"));
    }

    /** Throws NoSuchBucket, as S3 answers it, when {@code bucket} does not exist: a listing of one key asks. */
    void requireBucket(String bucket) throws IOException {
        frontFor(bucket).list(new ListRequest(bucket, "", null, null, 1));
    }
}
