package dev.ferry.store.chain;

/**
 * Settings of {@link ParallelReadStore}: reads longer than {@code partSize} (default 8 MiB) go out as ranged
 * GETs of {@code partSize}, {@code concurrency} (default 8) in flight per read; parts fetched ahead of their
 * readers are held in memory, {@code maxBufferedBytes} (default 256 MiB, or a quarter of the JVM's maximum heap
 * when that is less) of them at most in the whole store, beyond which a read's next part is streamed when its
 * reader gets there instead of fetched ahead.
 */
public record ParallelReadConfig(long partSize, int concurrency, long maxBufferedBytes) {
    public static final long DEFAULT_MAX_BUFFERED_BYTES = Math.min(256L << 20, Runtime.getRuntime().maxMemory() / 4);
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
        if (maxBufferedBytes < 0) {
            throw new IllegalArgumentException("maxBufferedBytes must not be negative: " + maxBufferedBytes);
        }
    }

    /** With the default {@code maxBufferedBytes}. */
    public ParallelReadConfig(long partSize, int concurrency) {
        this(partSize, concurrency, DEFAULT_MAX_BUFFERED_BYTES);
    }
}
