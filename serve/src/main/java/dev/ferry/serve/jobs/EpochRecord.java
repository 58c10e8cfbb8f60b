package dev.ferry.serve.jobs;

import dev.ferry.serve.node.Counters;
import org.HdrHistogram.Histogram;

/**
 * One epoch of a job: what its consumers reported (samples, steps, waits, position), and the daemon-wide counters
 * when it began and ended. Guarded by the {@link RunningJob} it belongs to.
 */
final class EpochRecord {
    final int number;
    final long startNanos;
    final Histogram waits = new Histogram(3_600_000_000L, 2); // microseconds
    final Counters atStart;
    long samples;
    long steps;
    long waitTotalMicros;
    long lastReportNanos;
    long position;
    Counters atEnd;

    EpochRecord(int number, long startNanos, Counters atStart) {
        this.number = number;
        this.startNanos = startNanos;
        this.atStart = atStart;
        this.lastReportNanos = startNanos;
    }
}
