package dev.ferry.store;

import java.io.IOException;
import java.util.List;

/** Optional ability: a store that can list and create buckets (the embedded store, S3, a directory). */
public interface BucketOperations {
    /** Names of the buckets this store's credentials can see, sorted. */
    List<String> listBuckets() throws IOException;

    /** Creates a bucket; creating one that exists and is ours is not an error. */
    void createBucket(String bucket) throws IOException;
}
