package dev.ferry.cache;

import java.io.IOException;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local tier's running counts, shared by the store, its index and its read path; {@link CacheStats} is a
 * snapshot of them. Thread-safe: each count is a {@link LongAdder}, counted without a lock.
 */
final class CacheCounters {
    private static final Logger LOG = LoggerFactory.getLogger(CacheCounters.class);

    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder bytesFromCache = new LongAdder();
    final LongAdder bytesFromUpstream = new LongAdder();
    final LongAdder upstreamRequests = new LongAdder();
    final LongAdder evictedCapacity = new LongAdder();
    final LongAdder evictedStale = new LongAdder();
    final LongAdder evictedCorrupt = new LongAdder();
    final LongAdder bypassed = new LongAdder();
    final LongAdder writeFailures = new LongAdder();
    final LongAdder prefetchedBlocks = new LongAdder();
    final LongAdder prefetchedBytes = new LongAdder();
    final LongAdder verifiedBlocks = new LongAdder();
    final LongAdder metadataLookups = new LongAdder();
    /** Who is told where each read's bytes came from (see {@link CachingStore#ledger}). */
    volatile TierLedger ledger = TierLedger.NONE;
    private final java.util.concurrent.atomic.AtomicLong ledgerFailures = new java.util.concurrent.atomic.AtomicLong();

    /** Tells the ledger of a read's bytes; a ledger that fails costs the accounting, never the read. */
    void served(BlockId block, long bytes, long arrivedNanos, boolean first) {
        try {
            ledger.served(block, bytes, arrivedNanos, first);
        } catch (RuntimeException e) {
            ledgerFailed(e);
        }
    }

    /** Tells the ledger of a block fetched; a ledger that fails costs the accounting, never the fetch. */
    void fetched(BlockId block, long bytes, boolean prefetch, boolean request) {
        try {
            ledger.fetched(block, bytes, prefetch, request);
        } catch (RuntimeException e) {
            ledgerFailed(e);
        }
    }

    private void ledgerFailed(RuntimeException e) {
        if (ledgerFailures.getAndIncrement() % 10_000 == 0) {
            LOG.warn("the local tier's ledger failed ({}; {} times so far): reads go on, their accounting is short", e, ledgerFailures.get());
        }
    }

    /** Counts a write the disk refused, warning on the first and every thousandth. */
    void writeFailed(IOException failure) {
        writeFailures.increment();
        if (writeFailures.sum() == 1 || writeFailures.sum() % 1000 == 0) {
            LOG.warn("cannot write to the cache ({}); serving from upstream ({} write failures so far)",
                    failure.getMessage(), writeFailures.sum());
        }
    }

    CacheStats stats(long residentBlocks, long residentBytes, boolean passThrough) {
        return new CacheStats(hits.sum(), misses.sum(), bytesFromCache.sum(), bytesFromUpstream.sum(), upstreamRequests.sum(),
                evictedCapacity.sum(), evictedStale.sum(), evictedCorrupt.sum(), bypassed.sum(), writeFailures.sum(),
                residentBlocks, residentBytes, passThrough, prefetchedBlocks.sum(), prefetchedBytes.sum(),
                verifiedBlocks.sum(), metadataLookups.sum());
    }
}
