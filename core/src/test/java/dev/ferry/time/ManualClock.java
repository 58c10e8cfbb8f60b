package dev.ferry.time;

import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when told to; {@link #sleepNanos} advances it at once, so tests never wait. */
public final class ManualClock implements Clock {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AtomicLong slept = new AtomicLong();

    @Override
    public long nanoTime() {
        return now.get();
    }

    @Override
    public void sleepNanos(long nanos) {
        if (nanos > 0) {
            now.addAndGet(nanos);
            slept.addAndGet(nanos);
        }
    }

    public void advanceMillis(long millis) {
        now.addAndGet(millis * 1_000_000L);
    }

    /** Total time spent in {@link #sleepNanos}. */
    public long sleptNanos() {
        return slept.get();
    }
}
