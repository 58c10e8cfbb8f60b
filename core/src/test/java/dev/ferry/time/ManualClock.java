package dev.ferry.time;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves only when told to; {@link #sleepNanos} advances it at once, so tests never wait. Its wall time
 * starts at a fixed instant and moves with its nanoseconds.
 */
public final class ManualClock implements Clock {
    private static final long START = 1_000_000_000L;
    private static final Instant WALL_START = Instant.parse("2026-01-01T00:00:00Z");
    private final AtomicLong now = new AtomicLong(START);
    private final AtomicLong slept = new AtomicLong();

    @Override
    public long nanoTime() {
        return now.get();
    }

    @Override
    public Instant now() {
        return WALL_START.plusNanos(now.get() - START);
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
