package dev.ferry.cache;

import dev.ferry.store.ObjectKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the local tier holds, by bucket and key prefix, and dropping a prefix from it: what {@code ferry cache ls} and
 * {@code ferry cache drop} show and do (Alluxio's and JuiceFS's equivalents list and free a path). Kept apart from
 * {@link CachingStore}'s read and write path, as rarely used operations. Thread-safe: the index guards itself.
 */
public final class TierContents {
    private final BlockIndex index;
    private final long capacity;

    TierContents(BlockIndex index, long capacity) {
        this.index = index;
        this.capacity = capacity;
    }

    /**
     * Resident under one bucket and prefix: {@code objects} with a block on the tier, their {@code blocks} and
     * {@code bytes}, and {@code lastUseNanos}, the latest read of any of them, or arrival when none was read since
     * this process began (the tier's clock; {@link TierLedger#BEFORE_START} for blocks found on disk and not read
     * since). {@code prefix} is empty for a bucket's line; it ends with {@code /} for a folder, not for an object.
     */
    public record Holding(String bucket, String prefix, long objects, long blocks, long bytes, long lastUseNanos) {
    }

    /** Blocks and bytes a drop removed. */
    public record Dropped(long blocks, long bytes) {
    }

    /** The tier's capacity, bytes (what blocks may hold, and what is lent, together). */
    public long capacity() {
        return capacity;
    }

    /**
     * Lends {@code bytes} of the capacity to another holder on the tier's disk (the decoded samples,
     * {@code dev.ferry.decoded.DecodedSamples}), replacing what was lent before: the blocks hold at most the rest, and
     * evict down to it now, farthest next use first. Returns the bytes lent (at most the capacity).
     */
    public long lend(long bytes) {
        return index.lend(bytes);
    }

    /**
     * One level of what the tier holds: with {@code bucket} null, a line per bucket; else a line per folder or object
     * under {@code prefix} in it (as a listing delimited by {@code /} shows them), sorted.
     */
    public List<Holding> list(String bucket, String prefix) {
        String p = prefix == null ? "" : prefix;
        // grouped outside the index's lock: a snapshot of the blocks is all it holds the lock for
        Map<String, long[]> groups = new TreeMap<>(); // bucket \0 prefix -> objects, blocks, bytes, last use
        Map<ObjectKey, String> groupOf = new HashMap<>();
        for (BlockIndex.Resident r : index.residentUnder(bucket, p)) {
            ObjectKey key = r.key();
            String group = groupOf.computeIfAbsent(key, k -> {
                if (bucket == null) {
                    return k.bucket() + "\0";
                }
                int slash = k.key().indexOf('/', p.length());
                return k.bucket() + "\0" + (slash < 0 ? k.key() : k.key().substring(0, slash + 1));
            });
            long[] g = groups.computeIfAbsent(group, k -> new long[] {0, 0, 0, TierLedger.BEFORE_START});
            g[1]++;
            g[2] += r.bytes();
            g[3] = Math.max(g[3], r.lastUseNanos());
        }
        groupOf.values().forEach(group -> groups.get(group)[0]++); // objects with a block on the tier
        List<Holding> out = new ArrayList<>(groups.size());
        groups.forEach((k, g) -> {
            int sep = k.indexOf('\0');
            out.add(new Holding(k.substring(0, sep), k.substring(sep + 1), g[0], g[1], g[2], g[3]));
        });
        return out;
    }

    /** Drops every resident block of {@code bucket}'s keys that start with {@code prefix} ("" for the whole bucket). */
    public Dropped drop(String bucket, String prefix) {
        BlockIndex.Usage u = index.drop(bucket, prefix == null ? "" : prefix);
        return new Dropped(u.blocks(), u.bytes());
    }
}
