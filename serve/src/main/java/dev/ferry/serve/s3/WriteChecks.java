package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a write-back daemon checks before it acknowledges a write it will upload later, so that it does not
 * acknowledge what would fail forever: that the bucket exists in the store (a folder store also checks the
 * key is one it can hold), and that the object's headers can be uploaded ({@link #checkAttributes}). A bucket seen to exist is believed for {@code ttl}; a missing bucket is asked
 * again every time (it may be created any moment). Only a definite "no such bucket" refuses: a store that
 * does not answer, or does not let ferry list, does not stop a write that write-back exists to take.
 * Thread-safe.
 */
final class WriteChecks {
    /** The most bytes of kept headers ({@code name: value} lines) an upload can carry to S3. */
    static final int MAX_KEPT_HEADER_BYTES = 6 * 1024;

    private final ObjectStore store;
    private final FileObjectStore folder;
    private final dev.ferry.tier.LocalWrites writeBack;
    private final Duration ttl;
    private final Clock clock;
    private final ConcurrentHashMap<String, Long> seen = new ConcurrentHashMap<>();

    /**
     * @param store  the store under the local tier, asked for the bucket
     * @param folder the origin when it is a folder store (keys are checked too), else null
     * @param writeBack the write-back store, whose writes not yet uploaded the folder store does not see
     * @param ttl    how long a bucket seen to exist is believed, by {@code clock}
     */
    WriteChecks(ObjectStore store, FileObjectStore folder, dev.ferry.tier.LocalWrites writeBack, Duration ttl, Clock clock) {
        this.store = store;
        this.folder = folder;
        this.writeBack = writeBack;
        this.ttl = ttl;
        this.clock = clock;
    }

    /**
     * Throws the error the upload of {@code key} with {@code attributes} would meet for good, if it can be
     * known now: the bucket and key as {@link #check(ObjectKey)}, and headers that the upload could not carry.
     */
    void check(ObjectKey key, ObjectAttributes attributes) throws S3Error, IOException {
        checkAttributes(attributes);
        check(key);
    }

    /**
     * Headers an upload re-sends that a store will refuse for good. S3 refuses a request whose header section is
     * over 8 KiB ({@code RequestHeaderSectionTooLarge}); the upload adds its own (signature, date, digests,
     * user agent: about 1.5 KiB), so the object's kept headers may take {@value #MAX_KEPT_HEADER_BYTES} bytes.
     * S3 keeps an {@code Expires} that is not a date as a string, but stores that keep it as a date (s3proxy,
     * so ferry's own embedded store) refuse the upload: a write-back daemon cannot know which one it writes
     * to, so it takes only an HTTP date.
     */
    static void checkAttributes(ObjectAttributes attributes) throws S3Error {
        long bytes = 0;
        for (Map.Entry<String, String> h : attributes.headers().entrySet()) {
            bytes += h.getKey().length() + h.getValue().getBytes(StandardCharsets.UTF_8).length + 4; // ": " and CRLF
        }
        if (bytes > MAX_KEPT_HEADER_BYTES) {
            throw S3Error.badRequest("RequestHeaderSectionTooLarge", "the object's headers (" + bytes + " bytes) leave no room for"
                    + " the upload's own under S3's 8 KiB header limit; keep them within " + MAX_KEPT_HEADER_BYTES + " bytes");
        }
        String expires = attributes.get("expires");
        if (expires != null) {
            try {
                DateTimeFormatter.RFC_1123_DATE_TIME.parse(expires.trim());
            } catch (DateTimeParseException e) {
                throw S3Error.invalidArgument("Expires must be an HTTP date (e.g. Wed, 21 Oct 2015 07:28:00 GMT) for a write-back"
                        + " daemon to upload it: " + Uris.abbreviate(expires));
            }
        }
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
        if (at != null && clock.nanoTime() - at < ttl.toNanos()) {
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
        seen.put(key.bucket(), clock.nanoTime());
    }

    /** Forgets what is known of a bucket (created or deleted through the daemon). */
    void forget(String bucket) {
        seen.remove(bucket);
    }
}
