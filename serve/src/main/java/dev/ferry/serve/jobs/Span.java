package dev.ferry.serve.jobs;

import dev.ferry.store.ObjectKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A run of consecutive samples of an order that read one object (the same key and ETag): what a client reads
 * in one ranged GET ({@code offset}, {@code length}: the bytes that cover every sample of the run) and splits.
 * The samples keep their order, which need not be the order of their bytes (a shuffled shard).
 */
record Span(ObjectKey key, String etag, long offset, long length, List<SampleRange> samples) {
    Span {
        if (samples.isEmpty()) {
            throw new IllegalArgumentException("samples is empty");
        }
        samples = List.copyOf(samples);
    }

    /** The order cut into spans: concatenating their samples gives the order back. */
    static List<Span> of(List<SampleRange> order) {
        List<Span> out = new ArrayList<>();
        int from = 0;
        for (int i = 1; i <= order.size(); i++) {
            if (i == order.size() || !sameObject(order.get(from), order.get(i))) {
                if (i > from) {
                    out.add(span(order.subList(from, i)));
                }
                from = i;
            }
        }
        return out;
    }

    private static boolean sameObject(SampleRange a, SampleRange b) {
        return a.key().equals(b.key()) && Objects.equals(a.etag(), b.etag());
    }

    private static Span span(List<SampleRange> run) {
        long start = Long.MAX_VALUE;
        long end = 0;
        for (SampleRange s : run) {
            start = Math.min(start, s.offset());
            end = Math.max(end, s.offset() + s.length());
        }
        SampleRange first = run.get(0);
        return new Span(first.key(), first.etag(), start, end - start, run);
    }
}
