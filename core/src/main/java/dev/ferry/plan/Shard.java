package dev.ferry.plan;

import dev.ferry.store.ObjectKey;
import java.util.List;
import java.util.Objects;

/**
 * One object of a dataset: its key, size, ETag (the version a run pins), how many samples it holds and,
 * when known (a tar shard that was indexed), where each sample starts: {@code sampleOffsets} has
 * {@code samples + 1} ascending entries, the last one the end of the last sample. Without offsets a sample
 * is taken to be the shard's size divided evenly.
 */
public record Shard(ObjectKey key, long size, String etag, int samples, List<Long> sampleOffsets) {
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
        if (sampleOffsets != null) {
            sampleOffsets = List.copyOf(sampleOffsets);
            if (sampleOffsets.size() != samples + 1) {
                throw new IllegalArgumentException("sampleOffsets of " + key + " must have samples + 1 = " + (samples + 1)
                        + " entries: " + sampleOffsets.size());
            }
            for (int i = 0; i < samples; i++) {
                if (sampleOffsets.get(i) > sampleOffsets.get(i + 1)) {
                    throw new IllegalArgumentException("sampleOffsets of " + key + " must ascend: entry " + i);
                }
            }
            if (sampleOffsets.get(0) < 0 || sampleOffsets.get(samples) > size) {
                throw new IllegalArgumentException("sampleOffsets of " + key + " must lie within its " + size + " bytes");
            }
        }
    }

    /** A shard whose samples are taken to be of equal size. */
    public Shard(ObjectKey key, long size, String etag, int samples) {
        this(key, size, etag, samples, null);
    }

    /** Where sample {@code index} starts (or, for {@code samples}, where the last one ends). */
    public long sampleOffset(int index) {
        if (sampleOffsets != null) {
            return sampleOffsets.get(index);
        }
        // size * index / samples without the product, which overflows for shards over 2^63 / samples bytes
        return size / samples * index + size % samples * index / samples;
    }
}
