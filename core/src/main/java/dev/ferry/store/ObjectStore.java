package dev.ferry.store;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;

/**
 * An object store: the one interface every tier of ferry implements, and every decorator too, so tiers and
 * decorators compose into a chain (cache -> shared tier -> retry -> governor -> meter -> S3). What not every
 * store can do is an optional ability beside it: {@link MultipartOperations}, {@link BucketOperations},
 * {@link PendingUploads}.
 *
 * <p>Failures are {@link StoreException}s classified by kind; a missing object is an
 * {@link ObjectNotFoundException}. Implementations are thread-safe.
 */
public interface ObjectStore extends Closeable {
    /** Metadata of the current version of an object. */
    ObjectMeta head(ObjectKey key) throws IOException;

    /** Opens a read of a whole object or a range of it; the caller closes the content. */
    ObjectContent get(GetRequest request) throws IOException;

    /** One page of keys under a prefix, in key order. */
    ListPage list(ListRequest request) throws IOException;

    /** Writes a whole object in one request, with the body's attributes, and returns the metadata of the version written. */
    ObjectMeta put(ObjectKey key, PutBody body) throws IOException;

    /** Deletes an object; deleting a missing object is not an error, as in S3. */
    void delete(ObjectKey key) throws IOException;

    /** Convenience: reads a range (or the whole object when {@code range} is null) into memory. */
    default byte[] readBytes(ObjectKey key, ByteRange range) throws IOException {
        return get(new GetRequest(key, range, null)).readAllBytes();
    }

    @Override
    default void close() throws IOException {
    }
}
