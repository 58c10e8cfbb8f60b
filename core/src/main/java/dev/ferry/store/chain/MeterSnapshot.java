package dev.ferry.store.chain;

import dev.ferry.store.StoreException;
import java.util.Map;

/**
 * What a {@link MeteredStore} has seen, at one moment: requests by operation, bytes read from the store
 * (egress) and written to it, failures by kind, first-byte latency percentiles in microseconds, and the
 * estimated cost under the meter's prices; and, summed over GETs, the time from request to close and the time
 * to the first byte (their differences over an interval give the mean reads in flight and the share of a
 * read's time spent waiting for its first byte).
 */
public record MeterSnapshot(
        Map<MeteredStore.Op, Long> requests,
        Map<StoreException.Kind, Long> failures,
        long egressBytes,
        long ingressBytes,
        long firstByteP50Micros,
        long firstByteP99Micros,
        long firstByteMaxMicros,
        double estimatedCostUsd,
        long getNanos,
        long firstByteNanos) {

    public MeterSnapshot {
        requests = Map.copyOf(requests);
        failures = Map.copyOf(failures);
    }

    public long requests(MeteredStore.Op op) {
        return requests.getOrDefault(op, 0L);
    }

    public long failures(StoreException.Kind kind) {
        return failures.getOrDefault(kind, 0L);
    }

    /** Mean GETs in flight between {@code earlier} and this snapshot, {@code nanos} apart (Little's law). */
    public double readsInFlightSince(MeterSnapshot earlier, long nanos) {
        return nanos <= 0 ? 0 : (double) (getNanos - earlier.getNanos) / nanos;
    }

    /** The share of GET time spent waiting for first bytes between {@code earlier} and this snapshot. */
    public double firstByteShareSince(MeterSnapshot earlier) {
        long total = getNanos - earlier.getNanos;
        return total <= 0 ? 0 : Math.min(1, (double) (firstByteNanos - earlier.firstByteNanos) / total);
    }

    public long totalRequests() {
        return requests.values().stream().mapToLong(Long::longValue).sum();
    }
}
