package dev.ferry.loader;

/**
 * Settings of a {@link Loader}. Keys and defaults:
 * <ul>
 *   <li>{@code batchSize} (32): samples per step.
 *   <li>{@code decodeWorkers} (4): threads that decode samples (CPU).
 *   <li>{@code fetchConcurrency} (16): sample reads in flight at once (I/O): object stores answer in tens of
 *       milliseconds, so reads must overlap to keep up.
 *   <li>{@code aheadSamples} (512): at most this many samples read and decoded ahead of the consumer (memory
 *       bound of the read-ahead).
 *   <li>{@code adaptive} (true): size the read-ahead from the measured consumption rate and read latency
 *       (Little's law: samples in flight = rate x latency, doubled for safety), within {@code aheadSamples};
 *       false: always read {@code aheadSamples} ahead.
 * </ul>
 * {@link #plain(int, int)} is a loader as frameworks ship them: each worker reads then decodes, two batches
 * ahead per worker (PyTorch's default prefetch factor).
 */
public record LoaderConfig(int batchSize, int decodeWorkers, int fetchConcurrency, int aheadSamples, boolean adaptive) {
    public static final LoaderConfig DEFAULT = new LoaderConfig(32, 4, 16, 512, true);

    public LoaderConfig {
        if (batchSize < 1 || decodeWorkers < 1 || fetchConcurrency < 1 || aheadSamples < 1) {
            throw new IllegalArgumentException("batchSize, decodeWorkers, fetchConcurrency and aheadSamples must be at least 1: "
                    + batchSize + ", " + decodeWorkers + ", " + fetchConcurrency + ", " + aheadSamples);
        }
    }

    /** A plain framework loader: {@code workers} each read and decode, two batches ahead per worker. */
    public static LoaderConfig plain(int batchSize, int workers) {
        return new LoaderConfig(batchSize, workers, workers, 2 * workers * batchSize, false);
    }

    public LoaderConfig withBatchSize(int size) {
        return new LoaderConfig(size, decodeWorkers, fetchConcurrency, aheadSamples, adaptive);
    }

    public LoaderConfig withDecodeWorkers(int workers) {
        return new LoaderConfig(batchSize, workers, fetchConcurrency, aheadSamples, adaptive);
    }

    public LoaderConfig withFetchConcurrency(int concurrency) {
        return new LoaderConfig(batchSize, decodeWorkers, concurrency, aheadSamples, adaptive);
    }

    public LoaderConfig withAheadSamples(int samples) {
        return new LoaderConfig(batchSize, decodeWorkers, fetchConcurrency, samples, adaptive);
    }
}
