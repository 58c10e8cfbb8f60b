package dev.ferry.loader;

import dev.ferry.store.ObjectKey;
import java.util.Map;
import java.util.Objects;

/**
 * One training sample: the members of a tar shard sharing a basename ({@code 000123.jpg}, {@code 000123.cls}
 * make sample {@code 000123} with fields {@code jpg} and {@code cls}), WebDataset's convention.
 */
public record Sample(ObjectKey shard, String key, Map<String, byte[]> fields) {
    public Sample {
        Objects.requireNonNull(shard, "shard is null");
        Objects.requireNonNull(key, "key is null");
        fields = Map.copyOf(fields);
    }

    /** Total bytes of all fields. */
    public long bytes() {
        long n = 0;
        for (byte[] b : fields.values()) {
            n += b.length;
        }
        return n;
    }
}
