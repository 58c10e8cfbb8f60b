package dev.ferry.time;

import java.time.Duration;

/**
 * A source of monotonic time that can also wait. Production code uses {@link #system()}; tests and the
 * simulator pass a clock they advance themselves.
 *
 * <p>Implementations are thread-safe.
 */
public interface Clock {
    /** Monotonic nanoseconds, as {@link System#nanoTime()}. */
    long nanoTime();

    /** Waits for {@code nanos} nanoseconds of this clock's time. */
    void sleepNanos(long nanos) throws InterruptedException;

    default void sleep(Duration duration) throws InterruptedException {
        sleepNanos(duration.toNanos());
    }

    /** The real clock. */
    static Clock system() {
        return SystemClock.INSTANCE;
    }
}
