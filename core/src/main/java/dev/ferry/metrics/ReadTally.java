package dev.ferry.metrics;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.TierLedger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts reads into the three parts of {@link ReadSources}, against when the epoch they belong to began. Thread-safe:
 * each count is a {@link LongAdder}.
 */
public final class ReadTally {
    private static final int RESIDENT = 0;
    private static final int PREFETCHED = 1;
    private static final int WAITED = 2;

    private final LongAdder[] bytes = {new LongAdder(), new LongAdder(), new LongAdder()};
    private final LongAdder[] reads = {new LongAdder(), new LongAdder(), new LongAdder()};

    /**
     * {@code bytes} of a block served, which arrived at {@code arrivedNanos} (see {@link TierLedger#served}), in an
     * epoch that began at {@code epochStartNanos} (the same clock); {@code first} counts a read.
     */
    public void served(long bytes, long arrivedNanos, boolean first, long epochStartNanos) {
        int part = arrivedNanos == TierLedger.WAITED ? WAITED
                : arrivedNanos == TierLedger.BEFORE_START || arrivedNanos - epochStartNanos < 0 ? RESIDENT : PREFETCHED;
        this.bytes[part].add(bytes);
        if (first) {
            reads[part].increment();
        }
    }

    /**
     * A ledger for a tier read by one loader (the demo's, a test's): every read it hears is counted here, against an
     * epoch that began at {@code epochStartNanos}; fetches are not its concern.
     */
    public TierLedger ledger(long epochStartNanos) {
        return new TierLedger() {
            @Override
            public void served(BlockId block, long bytes, long arrivedNanos, boolean first) {
                ReadTally.this.served(bytes, arrivedNanos, first, epochStartNanos);
            }

            @Override
            public void fetched(BlockId block, long bytes, boolean prefetch, boolean request) {
            }
        };
    }

    /** Every byte counted so far, whatever its part. */
    public long bytes() {
        return bytes[RESIDENT].sum() + bytes[PREFETCHED].sum() + bytes[WAITED].sum();
    }

    public ReadSources sources() {
        return new ReadSources(bytes[RESIDENT].sum(), bytes[PREFETCHED].sum(), bytes[WAITED].sum(), reads[RESIDENT].sum(),
                reads[PREFETCHED].sum(), reads[WAITED].sum());
    }
}
