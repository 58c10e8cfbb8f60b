package dev.ferry.store;

/**
 * Prices for estimating what a run costs at the object store. Defaults are AWS S3 Standard list prices in
 * us-east-1 (2026): egress to the internet {@code $0.09/GB}, GET and HEAD {@code $0.0004} per 1,000,
 * PUT, COPY, POST and LIST {@code $0.005} per 1,000. Egress inside a region to EC2 is free: set
 * {@code egressPerGb} to 0 for that case. GB here is 10^9 bytes, as AWS bills.
 */
public record Prices(double egressPerGb, double getPer1000, double putPer1000) {
    public static final Prices AWS_S3_STANDARD = new Prices(0.09, 0.0004, 0.005);

    public Prices {
        if (egressPerGb < 0 || getPer1000 < 0 || putPer1000 < 0) {
            throw new IllegalArgumentException("prices must not be negative: " + egressPerGb + ", " + getPer1000 + ", " + putPer1000);
        }
    }

    /** What one byte of egress costs, in USD (GB as AWS bills it: 10^9 bytes). */
    public double egressPerByte() {
        return egressPerGb / 1e9;
    }

    /** Estimated dollars for this many egress bytes and requests of each class. */
    public double cost(long egressBytes, long getClassRequests, long putClassRequests) {
        return egressBytes / 1e9 * egressPerGb + getClassRequests / 1000.0 * getPer1000 + putClassRequests / 1000.0 * putPer1000;
    }
}
