package dev.ferry.store.chain;

import dev.ferry.store.StoreException;
import dev.ferry.util.Sizes;
import java.util.Locale;
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

    /**
     * One line for people: the requests made, by operation, in the order of {@link MeteredStore.Op}; the bytes
     * read from the store and written to it; the estimated cost. Such as {@code 3000 GET, 30 LIST; 460.0 MiB read,
     * 0 B written, about $0.0426}.
     */
    public String describe() {
        StringBuilder s = new StringBuilder();
        for (MeteredStore.Op op : MeteredStore.Op.values()) {
            long n = requests(op);
            if (n > 0) {
                s.append(s.isEmpty() ? "" : ", ").append(n).append(' ').append(op);
            }
        }
        return (s.isEmpty() ? "no requests" : s) + "; " + Sizes.format(egressBytes) + " read, " + Sizes.format(ingressBytes)
                + " written, about $" + String.format(Locale.ROOT, "%.4f", estimatedCostUsd);
    }
}
