package dev.ferry.loader;

/**
 * Settings of a {@link Loader}. Keys and defaults: {@code batchSize} (32) samples per step;
 * {@code decodeWorkers} (4) threads that read and decode samples; {@code aheadSamples} (256) samples read
 * and decoded ahead of the consumer at most (the bounded queue).
 */
public record LoaderConfig(int batchSize, int decodeWorkers, int aheadSamples) {
    public static final LoaderConfig DEFAULT = new LoaderConfig(32, 4, 256);

    public LoaderConfig {
        if (batchSize < 1 || decodeWorkers < 1 || aheadSamples < 1) {
            throw new IllegalArgumentException("batchSize, decodeWorkers and aheadSamples must be at least 1: "
                    + batchSize + ", " + decodeWorkers + ", " + aheadSamples);
        }
    }

    public LoaderConfig withBatchSize(int size) {
        return new LoaderConfig(size, decodeWorkers, aheadSamples);
    }

    public LoaderConfig withDecodeWorkers(int workers) {
        return new LoaderConfig(batchSize, workers, aheadSamples);
    }

    public LoaderConfig withAheadSamples(int samples) {
        return new LoaderConfig(batchSize, decodeWorkers, samples);
    }
}
