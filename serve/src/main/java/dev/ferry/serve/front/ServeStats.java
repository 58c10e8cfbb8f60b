package dev.ferry.serve.front;

import dev.ferry.serve.jobs.ServeSnapshot;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * What the daemon's front has done: requests, errors, bytes sent by path (sendfile or streamed), streams cut,
 * connections, latency. The status reads it as a {@link ServeSnapshot}. Thread-safe.
 */
public final class ServeStats {
    private final LongAdder requests = new LongAdder();
    private final LongAdder clientErrors = new LongAdder();
    private final LongAdder serverErrors = new LongAdder();
    private final LongAdder zeroCopyBytes = new LongAdder();
    private final LongAdder streamedBytes = new LongAdder();
    private final LongAdder cut = new LongAdder();
    private final AtomicLong connections = new AtomicLong();
    private final Histogram latency = new ConcurrentHistogram(3_600_000_000_000L, 2);

    public void connectionOpened() {
        connections.incrementAndGet();
    }

    public void connectionClosed() {
        connections.decrementAndGet();
    }

    public void served(int status, long zeroCopy, long streamed) {
        if (zeroCopy > 0 || streamed > 0 || status < 400) {
            requests.increment();
        }
        zeroCopyBytes.add(zeroCopy);
        streamedBytes.add(streamed);
    }

    public void error(int status) {
        requests.increment();
        if (status >= 500 && status != 501) { // 501: the client asked for what ferry does not do, no fault of the daemon
            serverErrors.increment();
        } else {
            clientErrors.increment();
        }
    }

    public void cut() {
        cut.increment();
    }

    public void latency(long nanos) {
        latency.recordValue(Math.max(1, Math.min(nanos, latency.getHighestTrackableValue())));
    }

    /** The counts now. */
    public ServeSnapshot snapshot() {
        return new ServeSnapshot(requests.sum(), clientErrors.sum(), serverErrors.sum(), zeroCopyBytes.sum(), streamedBytes.sum(), cut.sum(),
                connections.get(), latency.getValueAtPercentile(50) / 1e6, latency.getValueAtPercentile(99) / 1e6);
    }
}
