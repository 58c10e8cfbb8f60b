package dev.ferry.cache;

import dev.ferry.store.ObjectKey;
import java.util.Objects;

/** A cached block's identity: the object, the version (ETag) its bytes belong to, and its index in the object. */
public record BlockId(ObjectKey key, String etag, long index) {
    public BlockId {
        Objects.requireNonNull(key, "key is null");
        if (etag == null || etag.isEmpty()) {
            throw new IllegalArgumentException("etag is missing for " + key);
        }
        if (index < 0) {
            throw new IllegalArgumentException("index is negative: " + index);
        }
    }
}
