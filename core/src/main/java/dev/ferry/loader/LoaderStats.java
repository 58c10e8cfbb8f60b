package dev.ferry.loader;

/**
 * The loader's side of the four numbers for one epoch of one rank: samples delivered, steps, seconds from
 * the first request for a batch to the last delivery, samples/s, the consumer's wait per step (p50 and p99,
 * milliseconds), in total and the longest (seconds), the bytes read, and the wasted read-ahead: samples (and their bytes)
 * read ahead but never consumed because the epoch was closed before reaching them; and the plan's shuffle
 * quality for the job's global batch ({@link dev.ferry.plan.ShardMix}).
 */
public record LoaderStats(int epoch, long samples, long steps, double seconds, double samplesPerSecond,
        double waitP50Millis, double waitP99Millis, double waitTotalSeconds, double waitMaxSeconds, long bytesRead, long wastedSamples, long wastedBytes,
        double globalBatchShardMix) {
}
