package dev.ferry.serve.jobs;

import dev.ferry.metrics.EpochReport;
import dev.ferry.metrics.ReadTally;
import dev.ferry.serve.node.Counters;
import java.util.Arrays;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * One epoch of a job: what its consumers reported (samples, steps, waits, position, and each rank's own clock), what
 * the local tier charged to it ({@link JobLedger}: its reads by where they came from, its egress), and the daemon-wide
 * counters when it began and ended. The consumers' fields are guarded by the {@link RunningJob} it belongs to; the
 * tier's are counted without a lock.
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
    /** Written under the job's lock, read without by the ledger. */
    volatile long position;
    Counters atEnd;
    /** The job's reads in this epoch, by where their bytes came from. */
    final ReadTally reads = new ReadTally();
    /**
     * Bytes the tier fetched for this job in this epoch (from the object store, or in a group or over a shared tier
     * from those too: {@link JobAdvice#originShare} keeps the egress), of them those for its next epoch, and the
     * requests they took.
     */
    final LongAdder fetchedBytes = new LongAdder();
    final LongAdder fetchedAheadBytes = new LongAdder();
    final LongAdder fetchRequests = new LongAdder();
    /** Samples its loaders read decoded (docs/decoded-cache.md), and the seconds of decode they saved. */
    final LongAdder decodedSamples = new LongAdder();
    final DoubleAdder decodeSecondsSaved = new DoubleAdder();
    /** Per rank: the seconds its reports covered by its own clock (NaN: it sent none), its waits, whether it reported. */
    private final double[] rankSeconds;
    private final double[] rankWaitSeconds;
    private final double[] rankLongestWaitSeconds;
    private final boolean[] rankReported;

    EpochRecord(int number, long startNanos, Counters atStart, int ranks) {
        this.number = number;
        this.startNanos = startNanos;
        this.atStart = atStart;
        this.lastReportNanos = startNanos;
        this.rankSeconds = new double[ranks];
        Arrays.fill(rankSeconds, Double.NaN);
        this.rankWaitSeconds = new double[ranks];
        this.rankLongestWaitSeconds = new double[ranks];
        this.rankReported = new boolean[ranks];
    }

    /**
     * A report of {@code rank}: its waits in seconds (and the longest of them), and the seconds it covers by its clock
     * (NaN: not said).
     */
    void rankReport(int rank, double waitSeconds, double longestWaitSeconds, double elapsedSeconds) {
        rankReported[rank] = true;
        rankWaitSeconds[rank] += waitSeconds;
        rankLongestWaitSeconds[rank] = Math.max(rankLongestWaitSeconds[rank], longestWaitSeconds);
        if (!Double.isNaN(elapsedSeconds)) {
            rankSeconds[rank] = (Double.isNaN(rankSeconds[rank]) ? 0 : rankSeconds[rank]) + elapsedSeconds;
        }
    }

    /** {@code bytes} fetched for this epoch ({@code ahead}: for the next), {@code request} the first of its request. */
    void charge(long bytes, boolean request, boolean ahead) {
        fetchedBytes.add(bytes);
        if (ahead) {
            fetchedAheadBytes.add(bytes);
        }
        if (request) {
            fetchRequests.increment();
        }
    }

    int ranks() {
        return rankReported.length;
    }

    /** Ranks that reported anything this epoch. */
    int ranksReported() {
        int n = 0;
        for (boolean r : rankReported) {
            n += r ? 1 : 0;
        }
        return n;
    }

    /**
     * The epoch's length by its consumers' clocks: the longest time any rank's reports covered (ranks run side by
     * side), or NaN when no rank said (a client that sends no {@code elapsed_s}).
     */
    double consumerSeconds() {
        double longest = Double.NaN;
        for (int r = 0; r < rankSeconds.length; r++) {
            if (!Double.isNaN(rankSeconds[r])) {
                longest = Double.isNaN(longest) ? rankSeconds[r] : Math.max(longest, rankSeconds[r]);
            }
        }
        return longest;
    }

    /**
     * The share of its own time each consumer spent waiting, over the ranks that said their time: their waits over
     * their time, at most 1. NaN when no rank said.
     */
    double consumerWaitShare() {
        double waited = 0;
        double time = 0;
        for (int r = 0; r < rankSeconds.length; r++) {
            if (!Double.isNaN(rankSeconds[r])) {
                waited += rankWaitSeconds[r];
                time += rankSeconds[r];
            }
        }
        return time <= 0 ? Double.NaN : Math.min(1.0, waited / time);
    }

    /**
     * As {@link #consumerWaitShare}, with each rank's longest wait (its start-up) set aside from its waits and its
     * time. NaN when no rank said its time.
     */
    double consumerSteadyWaitShare() {
        double waited = 0;
        double time = 0;
        double startup = 0;
        for (int r = 0; r < rankSeconds.length; r++) {
            if (!Double.isNaN(rankSeconds[r])) {
                waited += rankWaitSeconds[r];
                time += rankSeconds[r];
                startup += Math.min(rankWaitSeconds[r], rankLongestWaitSeconds[r]);
            }
        }
        return time <= 0 ? Double.NaN : EpochReport.steadyShare(Math.min(waited, time), time, Math.min(startup, time));
    }
}
