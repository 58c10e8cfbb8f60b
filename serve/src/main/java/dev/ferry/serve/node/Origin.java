package dev.ferry.serve.node;

import dev.ferry.store.BucketOperations;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PartRanges;
import dev.ferry.store.PendingUploads;
import dev.ferry.store.file.FileObjectStore;

/**
 * The store at the bottom of a node's stack as the node built it (an S3 endpoint, a folder, or the embedded store),
 * and what the S3 operations use of it beside its objects: its buckets, where its objects' parts lie, its
 * multipart uploads in progress. Immutable; the store is thread-safe.
 *
 * @param store                   the origin's object store (a bucket store: S3 or a folder)
 * @param description             the origin in words, for the status
 * @param keepsKeysAsFiles true when the origin is the embedded store, which keeps each object as a file (s3proxy's
 *                         file-system backend): a key ending in {@code /} is a folder there and holds no bytes, and a
 *                         segment of a key is a file name ({@link #whyUnstorable} says which are too long)
 */
public record Origin(ObjectStore store, String description, boolean keepsKeysAsFiles) {
    public Origin {
        if (!(store instanceof BucketOperations)) {
            throw new IllegalArgumentException("store is not a bucket store: " + store);
        }
    }

    /**
     * Why the origin cannot hold {@code key} (written by a multipart upload if {@code multipart}) as S3 would, in a
     * sentence, or null when it can (or cannot tell): the
     * embedded store keeps objects as files, and a segment longer than a file name can be is refused there.
     */
    public String whyUnstorable(String key, boolean multipart) {
        return keepsKeysAsFiles ? dev.ferry.embedded.EmbeddedStore.whyUnstorable(key, multipart) : null;
    }

    /** The origin's bucket operations. */
    public BucketOperations buckets() {
        return (BucketOperations) store;
    }

    /** The origin, when it is a folder store (writes check their keys against it), else null. */
    public FileObjectStore folder() {
        return store instanceof FileObjectStore folder ? folder : null;
    }

    /** Where the origin's objects' parts lie, when it can tell (S3), else null. */
    public PartRanges parts() {
        return store instanceof PartRanges p ? p : null;
    }

    /** The origin's multipart uploads in progress, or null when it keeps none. */
    public PendingUploads uploads() {
        return store instanceof PendingUploads p ? p : null;
    }
}
