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
    /** Who is told where each read's bytes came from (see {@link CachingStore#ledger}). */
    volatile TierLedger ledger = TierLedger.NONE;

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
                verifiedBlocks.sum());
    }
}
