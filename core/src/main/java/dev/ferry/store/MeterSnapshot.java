package dev.ferry.store;

import java.util.Map;

/**
 * What a {@link MeteredStore} has seen, at one moment: requests by operation, bytes read from the store
 * (egress) and written to it, failures by kind, first-byte latency percentiles in microseconds, and the
 * estimated cost under the meter's prices.
 */
public record MeterSnapshot(
        Map<MeteredStore.Op, Long> requests,
        Map<StoreException.Kind, Long> failures,
        long egressBytes,
        long ingressBytes,
        long firstByteP50Micros,
        long firstByteP99Micros,
        long firstByteMaxMicros,
        double estimatedCostUsd) {

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

    public long totalRequests() {
        return requests.values().stream().mapToLong(Long::longValue).sum();
    }
}
