package dev.ferry.time;

import java.time.Instant;
import java.util.concurrent.TimeUnit;

/** The JVM's monotonic clock; sleeps park the calling thread. */
enum SystemClock implements Clock {
    INSTANCE;

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public Instant now() {
        return Instant.now();
    }

    @Override
    public long epochMillis() {
        return System.currentTimeMillis();
    }

    @Override
    public void sleepNanos(long nanos) throws InterruptedException {
        if (nanos > 0) {
            TimeUnit.NANOSECONDS.sleep(nanos);
        }
    }
}
