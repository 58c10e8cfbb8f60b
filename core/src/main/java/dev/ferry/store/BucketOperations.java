package dev.ferry.store;

import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/** Optional ability: a store that can list, create and delete buckets (the embedded store, S3, a directory). */
public interface BucketOperations {
    /** A bucket and when it was created (as the store reports it). */
    record Bucket(String name, Instant created) {
        public Bucket {
            Objects.requireNonNull(name, "name is null");
            Objects.requireNonNull(created, "created is null");
        }
    }

    /** The buckets this store's credentials can see, sorted by name. */
    List<Bucket> listBuckets() throws IOException;

    /** Creates a bucket; creating one that exists and is ours is not an error. */
    void createBucket(String bucket) throws IOException;

    /**
     * Deletes an empty bucket. A bucket that holds objects fails with a {@link StoreException} of status 409
     * and code {@code BucketNotEmpty}; a missing one with {@link ObjectNotFoundException} ({@code NoSuchBucket}).
     */
    void deleteBucket(String bucket) throws IOException;
}
