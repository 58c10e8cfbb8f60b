package dev.ferry.store;

import java.util.Objects;

/** A multipart upload in progress: the object it will create and the store's id for it. */
public record MultipartUpload(ObjectKey key, String uploadId) {
    public MultipartUpload {
        Objects.requireNonNull(key, "key is null");
        if (uploadId == null || uploadId.isEmpty()) {
            throw new IllegalArgumentException("uploadId is missing for " + key);
        }
    }
}
