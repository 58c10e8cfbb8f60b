package dev.ferry.serve.protocol;

/** Headers of ferry's own on the S3 wire, between daemons. */
public final class FerryHeaders {
    /**
     * The request header that asks a group member for the blocks on its own disk only, never fetching: a daemon
     * sends it to the member that read a block last epoch (a hint), and takes a miss as a 404.
     */
    public static final String CACHED_ONLY = "x-ferry-cached-only";

    private FerryHeaders() {
    }
}
