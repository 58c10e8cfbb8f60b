package dev.ferry.store;

/**
 * One uploaded part of a multipart upload: its number (1 to 10,000), the ETag the store gave it and, when its
 * client named one, its checksum (FULL_OBJECT, of the part's bytes), which completing the upload checks.
 */
public record CompletedPart(int partNumber, String etag, Checksum checksum) {
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
        if (checksum != null && (checksum.type() != Checksum.Type.FULL_OBJECT || checksum.value() == null)) {
            throw new IllegalArgumentException("part " + partNumber + "'s checksum must be a value of its bytes: " + checksum);
        }
    }

    /** A part without a checksum. */
    public CompletedPart(int partNumber, String etag) {
        this(partNumber, etag, null);
    }
}
