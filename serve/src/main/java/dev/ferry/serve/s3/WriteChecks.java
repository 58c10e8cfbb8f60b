package dev.ferry.serve.s3;

import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a write-back daemon checks before it acknowledges a write it will upload later, so that it does not
 * acknowledge what would fail forever: that the bucket exists in the store (a folder store also checks the
 * key is one it can hold). A bucket seen to exist is believed for {@code ttl}; a missing bucket is asked
 * again every time (it may be created any moment). Only a definite "no such bucket" refuses: a store that
 * does not answer, or does not let ferry list, does not stop a write that write-back exists to take.
 * Thread-safe.
 */
final class WriteChecks {
    private final ObjectStore store;
    private final FileObjectStore folder;
    private final dev.ferry.writeback.WriteBackStore writeBack;
    private final Duration ttl;
    private final ConcurrentHashMap<String, Long> seen = new ConcurrentHashMap<>();

    /**
     * @param store  the store under the local tier, asked for the bucket
     * @param folder the origin when it is a folder store (keys are checked too), else null
     * @param writeBack the write-back store, whose writes not yet uploaded the folder store does not see
     */
    WriteChecks(ObjectStore store, FileObjectStore folder, dev.ferry.writeback.WriteBackStore writeBack, Duration ttl) {
        this.store = store;
        this.folder = folder;
        this.writeBack = writeBack;
        this.ttl = ttl;
    }

    /** Throws the error the upload of {@code key} would meet for good, if it can be known now. */
    void check(ObjectKey key) throws IOException {
        if (folder != null) {
            ObjectKey pending = writeBack.localFolderConflict(key); // an earlier write, acknowledged, not uploaded yet
            for (int waits = 0; pending != null && writeBack.deletePending(pending) && waits < 10; waits++) {
                // a delete waiting behind an upload: its key is in the folder until it is made, so wait for it
                ObjectKey deleted = pending;
                writeBack.flush(k -> k.equals(deleted), ttl);
                pending = writeBack.localFolderConflict(key);
            }
            folder.checkWritable(key);
            if (pending != null) {
                throw new StoreException(StoreException.Kind.FATAL, 400, "key cannot be stored in a file system store beside " + pending
                        + (writeBack.deletePending(pending) ? ", deleted and still waiting to be deleted in the store"
                                : ", written and not uploaded yet") + " (one of them would need the other as a folder): " + key, null);
            }
            return;
        }
        Long at = seen.get(key.bucket());
        if (at != null && System.nanoTime() - at < ttl.toNanos()) {
            return;
        }
        try {
            store.list(new ListRequest(key.bucket(), "", null, null, 1));
        } catch (ObjectNotFoundException e) {
            throw new ObjectNotFoundException("no such bucket: " + key.bucket() + " (nothing was written)");
        } catch (StoreException e) {
            if (e.kind() == StoreException.Kind.NOT_FOUND) {
                throw new ObjectNotFoundException("no such bucket: " + key.bucket() + " (nothing was written)");
            }
            return; // not a definite answer: write-back takes the write and retries its upload
        }
        seen.put(key.bucket(), System.nanoTime());
    }

    /** Forgets what is known of a bucket (created or deleted through the daemon). */
    void forget(String bucket) {
        seen.remove(bucket);
    }
}
