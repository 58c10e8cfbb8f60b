package dev.ferry.plan;

import dev.ferry.store.ObjectKey;
import java.util.Objects;

/** One object of a dataset: its key, size, ETag (the version a run pins) and how many samples it holds. */
public record Shard(ObjectKey key, long size, String etag, int samples) {
    public Shard {
        Objects.requireNonNull(key, "key is null");
        if (size < 0) {
            throw new IllegalArgumentException("size is negative for " + key + ": " + size);
        }
        if (etag == null || etag.isEmpty()) {
            throw new IllegalArgumentException("etag is missing for " + key);
        }
        if (samples < 1) {
            throw new IllegalArgumentException("samples must be at least 1 for " + key + ": " + samples);
        }
    }
}
