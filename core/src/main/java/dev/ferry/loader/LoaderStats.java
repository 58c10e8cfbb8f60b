package dev.ferry.loader;

/**
 * The loader's side of the four numbers for one epoch of one rank: samples delivered, steps, seconds from
 * the first request for a batch to the last delivery, samples/s, the consumer's wait per step (p50 and p99,
 * milliseconds) and in total (seconds), and the bytes read.
 */
public record LoaderStats(int epoch, long samples, long steps, double seconds, double samplesPerSecond,
        double waitP50Millis, double waitP99Millis, double waitTotalSeconds, long bytesRead) {
}
