package dev.ferry.cache;

/**
 * Told where the bytes the local tier hands its readers came from, and of every block it fetches from the object
 * store: what per-epoch and per-job accounting is built on (the daemon's jobs, the demo's epochs). A read of a
 * resident block says when the block arrived, so that whoever knows when an epoch began can tell a block that was
 * there before from one prefetched during the epoch; a read that waited for its block's fetch (its own, another
 * reader's, or a refused block read through) says {@link #WAITED}.
 *
 * <p>Called on readers' and fetchers' threads, for every slice read: an implementation counts and returns, and
 * must be thread-safe.
 */
public interface TierLedger {
    /** The arrival of bytes a reader waited for. */
    long WAITED = Long.MAX_VALUE;
    /** The arrival of a block found on disk when the tier opened: resident before anything this process timed. */
    long BEFORE_START = Long.MIN_VALUE;

    /**
     * {@code bytes} of {@code block} went to a reader. {@code arrivedNanos}: when the block became resident, by the
     * tier's clock ({@link #BEFORE_START} for one recovered at start), or {@link #WAITED}. {@code first}: these are
     * the first bytes of this read of the block (count reads by it).
     */
    void served(BlockId block, long bytes, long arrivedNanos, boolean first);

    /**
     * {@code bytes} of {@code block} came from the object store, fetched ahead of its readers ({@code prefetch}) or
     * for one. {@code request}: the block is the first of its upstream request (count requests by it).
     */
    void fetched(BlockId block, long bytes, boolean prefetch, boolean request);

    /** Counts nothing. */
    TierLedger NONE = new TierLedger() {
        @Override
        public void served(BlockId block, long bytes, long arrivedNanos, boolean first) {
        }

        @Override
        public void fetched(BlockId block, long bytes, boolean prefetch, boolean request) {
        }
    };
}
