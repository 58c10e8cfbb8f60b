package dev.ferry.writeback;

import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.Uploads;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One journaled write (or delete) made in the store, as {@link Uploader} sends each attempt. Stateless. */
final class StoreUpload {
    private static final Logger LOG = LoggerFactory.getLogger(StoreUpload.class);
    /** Largest object S3 takes in one PUT; a larger PUT (possible only from code, not the daemon) goes up in parts of {@code partSize}. */
    private static final long MAX_SINGLE_PUT = 5L << 30;

    private StoreUpload() {
    }

    /**
     * Uploads a write so that the store reports the ETag its client was answered: one PUT, or the client's parts; a
     * delete deletes. What the store answers is compared with what was acknowledged: another size is a failed write
     * (never durable). A single PUT carries its MD5, so a store that checks answers (the daemon's
     * {@link dev.ferry.store.chain.CheckedWrites}) compares the bytes too. Returns the ETag the store gave it (null
     * for a delete).
     */
    static String send(ObjectStore store, PendingWrite e, long partSize) throws IOException {
        if (e.delete) {
            store.delete(e.key); // S3 answers a delete of a missing key 204: a retried delete is no error
            return null;
        }
        ObjectAttributes attributes = e.record.attributes();
        ObjectMeta stored;
        if (e.record.partSizes() != null) {
            stored = Uploads.putParts(store, e.key, e.data, e.record.partSizes(), attributes, 4);
        } else if (e.size <= MAX_SINGLE_PUT) {
            stored = store.put(e.key, PutBody.ofFile(e.data).withAttributes(attributes).withEtag(e.etag));
        } else {
            stored = Uploads.putParts(store, e.key, e.data, partsOf(e.size, partSize), attributes, 4);
        }
        if (stored.size() != e.size) {
            throw new StoreException(StoreException.Kind.FATAL, 502, "the object store holds " + stored.size() + " bytes at " + e.key
                    + ", not the " + e.size + " bytes acknowledged: it stored something else, so the write failed", null);
        }
        if (!stored.etag().equals(e.etag)) {
            // a store that does not use content MD5s as ETags (S3 with SSE-KMS, say): the size is right, the ETag moves
            LOG.warn("the object store gave {} the ETag {}, not the {} its writer was answered; If-Match with the old one will fail",
                    e.key, stored.etag(), e.etag);
        }
        return stored.etag();
    }

    private static List<Long> partsOf(long size, long partSize) {
        List<Long> sizes = new ArrayList<>();
        for (long offset = 0; offset < size; offset += partSize) {
            sizes.add(Math.min(partSize, size - offset));
        }
        return sizes;
    }
}
