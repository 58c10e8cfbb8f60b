package dev.ferry.metrics;

/**
 * Where the bytes (and block reads) a loader got in one epoch came from, in three parts that add up to all of them:
 * {@code resident}, on the local tier before the epoch asked for them (kept from earlier epochs or jobs, or
 * fetched ahead for this epoch while the one before ran); {@code prefetched}, fetched during the epoch and there
 * before the read; {@code waited}, the read waited for its block to come from the object store (its own fetch,
 * another reader's still under way, or a block the tier refused to keep). The headline local hit rate is the
 * resident share (what the tier held over from before: it falls when the working set outgrows the node); the
 * ready share (resident and prefetched) is what the loader did not wait for. docs/metrics.md defines each.
 */
public record ReadSources(long residentBytes, long prefetchedBytes, long waitedBytes, long residentReads, long prefetchedReads,
        long waitedReads) {
    public static final ReadSources NONE = new ReadSources(0, 0, 0, 0, 0, 0);

    public long bytes() {
        return residentBytes + prefetchedBytes + waitedBytes;
    }

    public long reads() {
        return residentReads + prefetchedReads + waitedReads;
    }

    /** The headline hit rate by bytes: resident before the epoch asked (0 with no bytes). */
    public double residentShareBytes() {
        return share(residentBytes, bytes());
    }

    /** The headline hit rate by block reads. */
    public double residentShareReads() {
        return share(residentReads, reads());
    }

    public double prefetchedShareBytes() {
        return share(prefetchedBytes, bytes());
    }

    public double waitedShareBytes() {
        return share(waitedBytes, bytes());
    }

    /** Block reads that waited for the object store. */
    public double waitedShareReads() {
        return share(waitedReads, reads());
    }

    /** Bytes the loader did not wait for: resident or prefetched in time. */
    public double readyShareBytes() {
        return share(residentBytes + prefetchedBytes, bytes());
    }

    /** These less {@code earlier} (counts taken from the same tally). */
    public ReadSources minus(ReadSources earlier) {
        return new ReadSources(residentBytes - earlier.residentBytes, prefetchedBytes - earlier.prefetchedBytes,
                waitedBytes - earlier.waitedBytes, residentReads - earlier.residentReads, prefetchedReads - earlier.prefetchedReads,
                waitedReads - earlier.waitedReads);
    }

    private static double share(long part, long whole) {
        return whole == 0 ? 0 : (double) part / whole;
    }
}
