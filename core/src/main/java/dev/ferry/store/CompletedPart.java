package dev.ferry.store;

/** One uploaded part of a multipart upload: its number (1 to 10,000) and the ETag the store gave it. */
public record CompletedPart(int partNumber, String etag) {
    public static final int MAX_PARTS = 10_000;
    /** The smallest part S3 takes, but for the last. */
    public static final long MIN_SIZE = 5L << 20;

    public CompletedPart {
        if (partNumber < 1 || partNumber > MAX_PARTS) {
            throw new IllegalArgumentException("partNumber must be 1 to " + MAX_PARTS + ": " + partNumber);
        }
        if (etag == null || etag.isEmpty()) {
            throw new IllegalArgumentException("etag is missing for part " + partNumber);
        }
        etag = ObjectMeta.stripQuotes(etag);
    }
}
