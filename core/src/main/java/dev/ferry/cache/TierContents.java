package dev.ferry.cache;

import java.util.List;

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

    /** The tier's capacity, bytes. */
    public long capacity() {
        return capacity;
    }

    /**
     * One level of what the tier holds: with {@code bucket} null, a line per bucket; else a line per folder or object
     * under {@code prefix} in it (as a listing delimited by {@code /} shows them), sorted.
     */
    public List<Holding> list(String bucket, String prefix) {
        return index.holdings(bucket, prefix == null ? "" : prefix);
    }

    /** Drops every resident block of {@code bucket}'s keys that start with {@code prefix} ("" for the whole bucket). */
    public Dropped drop(String bucket, String prefix) {
        BlockIndex.Usage u = index.drop(bucket, prefix == null ? "" : prefix);
        return new Dropped(u.blocks(), u.bytes());
    }
}
