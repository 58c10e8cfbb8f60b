package dev.ferry.embedded;

import java.time.Duration;
import java.util.Objects;

/**
 * How the embedded store imitates cloud object storage. Keys and defaults of {@link #cloud()}:
 * <ul>
 *   <li>{@code firstByteLatency} (30 ms): added before every response starts, as S3's time to first byte.
 *   <li>{@code connectionBandwidth} (64 MiB/s; 0 = unlimited): cap on each GET's body. A connection carries
 *       one request at a time, so this is the per-connection cap; parallel connections are how clients go
 *       faster, as with S3.
 *   <li>{@code aggregateBandwidth} (400 MiB/s; 0 = unlimited): cap on all GET bodies together, the node's
 *       share of the network. Set below what this server reaches on a small machine, so runs are
 *       reproducible.
 *   <li>{@code prefixRequestRate} (5,500 requests/s; 0 = unlimited): requests per second per prefix, S3's
 *       documented GET rate; beyond it, requests get {@code 503 SlowDown}.
 *   <li>{@code prefixBurst} (100 ms): how much unused rate a prefix may save up, as time at that rate.
 *   <li>{@code prefixDepth} (1): leading key segments that make a prefix, as in the client's governor.
 * </ul>
 * {@link #none()} turns everything off: as fast as the machine allows.
 */
public record CloudProfile(
        Duration firstByteLatency,
        long connectionBandwidth,
        long aggregateBandwidth,
        double prefixRequestRate,
        Duration prefixBurst,
        int prefixDepth) {

    public CloudProfile {
        Objects.requireNonNull(firstByteLatency, "firstByteLatency is null");
        Objects.requireNonNull(prefixBurst, "prefixBurst is null");
        if (firstByteLatency.isNegative() || prefixBurst.isNegative() || prefixBurst.isZero()) {
            throw new IllegalArgumentException("firstByteLatency must not be negative and prefixBurst must be positive");
        }
        if (connectionBandwidth < 0 || aggregateBandwidth < 0 || prefixRequestRate < 0) {
            throw new IllegalArgumentException("bandwidths and prefixRequestRate must not be negative (0 means unlimited)");
        }
        if (prefixDepth < 0) {
            throw new IllegalArgumentException("prefixDepth must not be negative: " + prefixDepth);
        }
    }

    public static CloudProfile cloud() {
        return new CloudProfile(Duration.ofMillis(30), 64L << 20, 400L << 20, 5500, Duration.ofMillis(100), 1);
    }

    public static CloudProfile none() {
        return new CloudProfile(Duration.ZERO, 0, 0, 0, Duration.ofMillis(100), 1); // the burst applies once a rate is set
    }

    /** A profile by name: {@code cloud} or {@code none}. */
    public static CloudProfile named(String name) {
        return switch (name) {
            case "cloud" -> cloud();
            case "none" -> none();
            default -> throw new IllegalArgumentException("unknown profile '" + name + "': use cloud or none");
        };
    }

    /** The profile in words, as {@code ferry store}, the demo and the benchmarks print it. */
    public String describe() {
        if (isNone()) {
            return "none";
        }
        return "cloud: first byte " + firstByteLatency().toMillis() + " ms, "
                + (connectionBandwidth() == 0 ? "no per-connection cap" : (connectionBandwidth() >> 20) + " MiB/s per connection") + ", "
                + (aggregateBandwidth() == 0 ? "no aggregate cap" : (aggregateBandwidth() >> 20) + " MiB/s in all") + ", "
                + (prefixRequestRate() == 0 ? "no request limit" : (long) prefixRequestRate() + " requests/s per prefix");
    }

    public boolean isNone() {
        return firstByteLatency.isZero() && connectionBandwidth == 0 && aggregateBandwidth == 0 && prefixRequestRate == 0;
    }

    public CloudProfile withFirstByteLatency(Duration latency) {
        return new CloudProfile(latency, connectionBandwidth, aggregateBandwidth, prefixRequestRate, prefixBurst, prefixDepth);
    }

    public CloudProfile withConnectionBandwidth(long bytesPerSecond) {
        return new CloudProfile(firstByteLatency, bytesPerSecond, aggregateBandwidth, prefixRequestRate, prefixBurst, prefixDepth);
    }

    public CloudProfile withAggregateBandwidth(long bytesPerSecond) {
        return new CloudProfile(firstByteLatency, connectionBandwidth, bytesPerSecond, prefixRequestRate, prefixBurst, prefixDepth);
    }

    public CloudProfile withPrefixRequestRate(double requestsPerSecond) {
        return new CloudProfile(firstByteLatency, connectionBandwidth, aggregateBandwidth, requestsPerSecond, prefixBurst, prefixDepth);
    }
}
