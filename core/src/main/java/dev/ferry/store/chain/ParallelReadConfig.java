package dev.ferry.store.chain;

/**
 * Settings of {@link ParallelReadStore}: reads longer than {@code partSize} (default 8 MiB) go out as ranged
 * GETs of {@code partSize}, {@code concurrency} (default 8) in flight per read.
 */
public record ParallelReadConfig(long partSize, int concurrency) {
    public static final ParallelReadConfig DEFAULT = new ParallelReadConfig(8L << 20, 8);

    public ParallelReadConfig {
        if (partSize < 4096) {
            throw new IllegalArgumentException("partSize must be at least 4 KiB: " + partSize);
        }
        if (partSize > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("partSize must be under 2 GiB: " + partSize);
        }
        if (concurrency < 1) {
            throw new IllegalArgumentException("concurrency must be positive: " + concurrency);
        }
    }
}
