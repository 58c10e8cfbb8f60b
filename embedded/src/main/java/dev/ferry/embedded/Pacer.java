package dev.ferry.embedded;

import dev.ferry.time.Clock;

/**
 * Paces a flow of bytes to a rate: each caller reserves the time its bytes take at the rate and sleeps
 * until its reservation ends. Callers share the rate fairly in arrival order. Thread-safe.
 */
final class Pacer {
    private final double bytesPerNano;
    private final Clock clock;
    private long nextFree;

    Pacer(long bytesPerSecond, Clock clock) {
        this.bytesPerNano = bytesPerSecond / 1e9;
        this.clock = clock;
    }

    void acquire(long bytes) throws InterruptedException {
        long until;
        synchronized (this) {
            long now = clock.nanoTime();
            long start = Math.max(now, nextFree);
            nextFree = start + (long) (bytes / bytesPerNano);
            until = nextFree;
        }
        clock.sleepNanos(until - clock.nanoTime());
    }
}
