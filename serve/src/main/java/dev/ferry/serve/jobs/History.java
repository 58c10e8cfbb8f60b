package dev.ferry.serve.jobs;

import dev.ferry.serve.node.Counters;
import dev.ferry.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Recorder;

/**
 * The four numbers over time, one point a second for the last few minutes: what the status page charts.
 * Waits and samples are recorded as consumers report them; hit rate and egress come from the daemon's
 * counters, as the difference since the previous point. Thread-safe.
 */
final class History {
    /** One second of the daemon's life. */
    record Point(double t, double samplesPerSecond, double waitP50Millis, double waitP99Millis, double hitRate, double egressBytesPerSecond,
            long egressBytes, double egressCostUsd) {
    }

    private final int capacity;
    private final ArrayDeque<Point> points = new ArrayDeque<>();
    private final Recorder waits = new Recorder(3_600_000_000L, 2);
    private final LongAdder samples = new LongAdder();
    private final long origin;
    private Counters last;

    /** {@code clock}: the daemon's, from whose start the points' times count. */
    History(int capacity, Clock clock) {
        this.capacity = capacity;
        this.origin = clock.nanoTime();
    }

    void recordWait(long micros) {
        waits.recordValue(Math.min(micros, 3_600_000_000L));
    }

    void recordSamples(long n) {
        samples.add(n);
    }

    synchronized void sample(Counters now, List<RunningJob> runs) {
        if (last == null) {
            last = now;
            return;
        }
        double dt = (now.nanos() - last.nanos()) / 1e9;
        var interval = waits.getIntervalHistogram();
        long hits = now.cache().hits() - last.cache().hits();
        long misses = now.cache().misses() - last.cache().misses();
        long egress = now.meter().egressBytes() - last.meter().egressBytes();
        Point p = new Point((now.nanos() - origin) / 1e9, samples.sumThenReset() / dt,
                interval.getTotalCount() == 0 ? 0 : interval.getValueAtPercentile(50) / 1000.0,
                interval.getTotalCount() == 0 ? 0 : interval.getValueAtPercentile(99) / 1000.0,
                hits + misses == 0 ? Double.NaN : (double) hits / (hits + misses), egress / dt, now.meter().egressBytes(),
                now.meter().estimatedCostUsd());
        points.addLast(p);
        while (points.size() > capacity) {
            points.removeFirst();
        }
        last = now;
    }

    synchronized List<Point> points() {
        return new ArrayList<>(points);
    }
}
