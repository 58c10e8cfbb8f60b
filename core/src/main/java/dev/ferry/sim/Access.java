package dev.ferry.sim;

import java.util.Objects;

/** One access of a trace: an object key and its size in bytes. */
public record Access(String key, long size) {
    public Access {
        Objects.requireNonNull(key, "key is null");
        if (size < 0) {
            throw new IllegalArgumentException("size is negative: " + size);
        }
    }
}
