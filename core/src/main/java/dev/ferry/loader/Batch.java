package dev.ferry.loader;

import java.util.List;

/** One step's samples, decoded, in plan order; {@code waitNanos} is how long the consumer waited for it. */
public record Batch<T>(int step, List<T> samples, long waitNanos) {
    public Batch {
        samples = List.copyOf(samples);
    }
}
