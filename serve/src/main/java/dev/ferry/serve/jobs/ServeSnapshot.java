package dev.ferry.serve.jobs;

/**
 * What the daemon's front has served, at one moment, as the status shows it (its {@code "serve"} section): requests,
 * errors, bytes sent by sendfile and streamed, streams cut short, open connections, latency. The front keeps the
 * counters; it calls into this package, so it is the one that knows this record, not the other way round.
 */
public record ServeSnapshot(long requests, long clientErrors, long serverErrors, long zeroCopyBytes, long streamedBytes, long cutStreams,
        long connections, double latencyP50Millis, double latencyP99Millis) {
}
