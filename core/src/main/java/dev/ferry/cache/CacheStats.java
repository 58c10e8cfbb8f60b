package dev.ferry.cache;

/**
 * What the local tier has done, at one moment. Block counts: {@code hits} were served from disk (or from a
 * fetch another reader had in flight), {@code misses} were fetched from upstream. Evictions by cause:
 * capacity, a stale version (the upstream showed a new ETag), corruption (a failed CRC). {@code bypassed}:
 * fetched but not kept because the policy refused them or they could not fit; {@code writeFailures}: not
 * kept because the disk refused (full, or unwritable): the read was served anyway. {@code prefetchedBlocks}
 * and {@code prefetchedBytes}: fetched ahead of the reader by a prefetcher (not counted as hits or misses:
 * the hit rate is the readers'). {@code verifiedBlocks}: resident blocks read back whole and checked against
 * their CRC32C before their bytes left (see {@link VerifyMode}); a check that failed counts in
 * {@code evictedCorrupt} too. {@code metadataLookups}: times a read or a caller looked a key up in the tier's metadata
 * (a GET through the daemon does once).
 */
public record CacheStats(
        long hits,
        long misses,
        long bytesFromCache,
        long bytesFromUpstream,
        long upstreamRequests,
        long evictedCapacity,
        long evictedStale,
        long evictedCorrupt,
        long bypassed,
        long writeFailures,
        long residentBlocks,
        long residentBytes,
        boolean passThrough,
        long prefetchedBlocks,
        long prefetchedBytes,
        long verifiedBlocks,
        long metadataLookups) {

    public double hitRate() {
        return hits + misses == 0 ? 0 : (double) hits / (hits + misses);
    }

    public double byteHitRate() {
        return bytesFromCache + bytesFromUpstream == 0 ? 0 : (double) bytesFromCache / (bytesFromCache + bytesFromUpstream);
    }
}
