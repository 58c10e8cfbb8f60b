package dev.ferry.time;

import java.time.Duration;
import java.time.Instant;

/**
 * A source of time that can also wait: monotonic nanoseconds for intervals and deadlines, and the wall time for
 * what is written down or sent (Last-Modified, Date, a record's time). Production code uses {@link #system()};
 * tests and the simulator pass a clock they advance themselves. Main code reads time only through a clock.
 *
 * <p>Implementations are thread-safe.
 */
public interface Clock {
    /** Monotonic nanoseconds, as {@link System#nanoTime()}. */
    long nanoTime();

    /** The wall time, as {@link Instant#now()}: for timestamps, never for measuring an interval. */
    Instant now();

    /** The wall time in milliseconds since the epoch. */
    default long epochMillis() {
        return now().toEpochMilli();
    }

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
