package dev.ferry.plan;

import java.util.List;

/**
 * A dataset version: its shards in a fixed order. Sample {@code g} of the dataset is sample
 * {@code g - offset(s)} of the shard {@code s} whose range holds it; the order of shards here is the
 * canonical order every plan starts from.
 */
public record Manifest(List<Shard> shards) {
    public Manifest {
        shards = List.copyOf(shards);
        if (shards.isEmpty()) {
            throw new IllegalArgumentException("manifest has no shards");
        }
        long total = 0;
        for (Shard s : shards) {
            total += s.samples();
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("manifest has more than 2^31 samples: " + total);
        }
    }

    public int totalSamples() {
        int total = 0;
        for (Shard s : shards) {
            total += s.samples();
        }
        return total;
    }

    public long totalBytes() {
        long total = 0;
        for (Shard s : shards) {
            total += s.size();
        }
        return total;
    }
}
