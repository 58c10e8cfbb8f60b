package dev.ferry.store;

import java.io.IOException;
import java.util.List;

/**
 * Optional ability: multipart uploads (S3's own, or parts staged on disk by the folder store). A store without
 * it (the node-local scratch bucket) takes objects whole; {@link ForwardingObjectStore} forwards it when its
 * delegate has it, so a decorator overrides only the calls it changes (Iceberg's {@code FileIO} and
 * {@code SupportsPrefixOperations} are arranged the same way).
 */
public interface MultipartOperations {
    /** Starts a multipart upload of {@code key}, whose object will keep {@code attributes}. */
    MultipartUpload startMultipart(ObjectKey key, ObjectAttributes attributes) throws IOException;

    /** Starts a multipart upload of {@code key}, an object with no attributes. */
    default MultipartUpload startMultipart(ObjectKey key) throws IOException {
        return startMultipart(key, ObjectAttributes.NONE);
    }

    /** Uploads one part (1 to 10,000) and returns it, with the ETag the store gave it. */
    CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException;

    /** Assembles the parts, in the order given, into the object. */
    ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException;

    /** Abandons an upload and frees its parts. */
    void abortMultipart(MultipartUpload upload) throws IOException;

    /** {@code store}'s multipart uploads; a store without them fails as S3 does (501 NotImplemented). */
    static MultipartOperations of(ObjectStore store) throws StoreException {
        if (store instanceof MultipartOperations ops) {
            return ops;
        }
        throw new StoreException(StoreException.Kind.FATAL, 501, "NotImplemented",
                store.getClass().getSimpleName() + " takes no multipart uploads: PUT the object whole", null);
    }
}
