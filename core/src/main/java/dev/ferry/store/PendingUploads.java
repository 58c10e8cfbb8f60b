package dev.ferry.store;

import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Optional ability: a store that can list the multipart uploads started and not yet completed or aborted,
 * and expire old ones (their staged parts deleted).
 */
public interface PendingUploads {
    /** An upload in progress: the object it will create, its id and when it was started. */
    record Upload(ObjectKey key, String uploadId, Instant initiated) {
        public Upload {
            Objects.requireNonNull(key, "key is null");
            Objects.requireNonNull(uploadId, "uploadId is null");
            Objects.requireNonNull(initiated, "initiated is null");
        }
    }

    /** Uploads in progress in {@code bucket} whose key starts with {@code prefix}, by key then start time. */
    List<Upload> listUploads(String bucket, String prefix) throws IOException;

    /**
     * Aborts every upload started before {@code cutoff} that is this store's to abort (a store that cannot know
     * an upload abandoned, S3's, aborts none); returns how many.
     */
    int expireUploads(Instant cutoff) throws IOException;
}
