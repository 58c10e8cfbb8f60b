package dev.ferry.serve.protocol;

/** Headers of ferry's own on the S3 wire, between daemons. */
public final class FerryHeaders {
    /**
     * The request header that asks a group member for the blocks on its own disk only, never fetching: a daemon
     * sends it to the member that read a block last epoch (a hint), and takes a miss as a 404.
     */
    public static final String CACHED_ONLY = "x-ferry-cached-only";

    /**
     * A copy of another daemon's write (the {@code peer} durability level): which daemon's journal it belongs to;
     * its presence makes a PUT (keep the copy) or a DELETE (let it go) a copy's. The other {@code COPY_} headers
     * describe the write: where it comes from, its sequence in that journal, the CRC32C and ETag of its bytes, the
     * sizes of its parts and when it was written (epoch milliseconds, by the writer's clock).
     */
    public static final String COPY_OF = "x-ferry-copy-of";
    public static final String COPY_FROM = "x-ferry-copy-from";
    public static final String COPY_SEQUENCE = "x-ferry-copy-sequence";
    public static final String COPY_CRC32C = "x-ferry-copy-crc32c";
    public static final String COPY_ETAG = "x-ferry-copy-etag";
    public static final String COPY_PARTS = "x-ferry-copy-parts";
    public static final String COPY_WRITTEN = "x-ferry-copy-written";

    /** A write's barrier: it is uploaded only after the writes under this prefix acknowledged before it. */
    public static final String AFTER = "x-ferry-after";

    private FerryHeaders() {
    }
}
