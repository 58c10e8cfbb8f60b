package dev.ferry.sim;

/** What one policy did with one trace. */
public record SimResult(String policy, long requests, long hits, long bytes, long hitBytes) {
    public double hitRate() {
        return requests == 0 ? 0 : (double) hits / requests;
    }

    public double byteHitRate() {
        return bytes == 0 ? 0 : (double) hitBytes / bytes;
    }

    /** Bytes that had to come from upstream: every byte missed. */
    public long upstreamBytes() {
        return bytes - hitBytes;
    }
}
