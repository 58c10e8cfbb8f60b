package dev.ferry.loader;

/**
 * One byte budget for everything read ahead of consumers in a process: every rank's and worker's read-ahead
 * draws from it, so memory for prefetched samples is bounded globally, not per reader. A reader that has
 * nothing in flight may always take one sample, whatever the budget, so no reader starves. Thread-safe.
 */
public final class ReadAheadBudget {
    private final long capacity;
    private long used;

    public ReadAheadBudget(long capacityBytes) {
        if (capacityBytes < 1) {
            throw new IllegalArgumentException("capacityBytes must be positive: " + capacityBytes);
        }
        this.capacity = capacityBytes;
    }

    /** Takes {@code bytes} if they fit, or if {@code force} (the caller has nothing in flight). */
    public synchronized boolean tryAcquire(long bytes, boolean force) {
        if (used + bytes > capacity && !force) {
            return false;
        }
        used += bytes;
        return true;
    }

    public synchronized void release(long bytes) {
        used = Math.max(0, used - bytes);
    }

    public synchronized long used() {
        return used;
    }

    public long capacity() {
        return capacity;
    }
}
