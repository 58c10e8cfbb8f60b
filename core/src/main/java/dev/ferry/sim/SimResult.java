package dev.ferry.sim;

/**
 * What one policy did with some accesses: requests and hits, the bytes the reads wanted and how many of
 * those came from the cache, and the bytes fetched from upstream (a kept block is fetched whole; a refused
 * one only for the bytes the read wanted).
 */
public record SimResult(String policy, long requests, long hits, long bytes, long hitBytes, long upstreamBytes) {
    public double hitRate() {
        return requests == 0 ? 0 : (double) hits / requests;
    }

    public double byteHitRate() {
        return bytes == 0 ? 0 : (double) hitBytes / bytes;
    }

    /** The tally between an earlier result and this one. */
    public SimResult minus(SimResult earlier) {
        return new SimResult(policy, requests - earlier.requests, hits - earlier.hits, bytes - earlier.bytes,
                hitBytes - earlier.hitBytes, upstreamBytes - earlier.upstreamBytes);
    }
}
