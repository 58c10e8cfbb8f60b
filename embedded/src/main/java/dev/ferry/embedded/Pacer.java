package dev.ferry.embedded;

/**
 * Paces a flow of bytes to a rate: each caller reserves the time its bytes take at the rate and sleeps
 * until its reservation ends. Callers share the rate fairly in arrival order. Thread-safe.
 */
final class Pacer {
    private final double bytesPerNano;
    private long nextFree;

    Pacer(long bytesPerSecond) {
        this.bytesPerNano = bytesPerSecond / 1e9;
    }

    void acquire(long bytes) throws InterruptedException {
        long until;
        synchronized (this) {
            long now = System.nanoTime();
            long start = Math.max(now, nextFree);
            nextFree = start + (long) (bytes / bytesPerNano);
            until = nextFree;
        }
        long wait = until - System.nanoTime();
        if (wait > 0) {
            java.util.concurrent.TimeUnit.NANOSECONDS.sleep(wait);
        }
    }
}
