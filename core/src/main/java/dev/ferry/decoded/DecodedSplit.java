package dev.ferry.decoded;

import dev.ferry.util.Sizes;
import java.util.Locale;

/**
 * How much of the node's tier holds decoded samples, the rest holding encoded blocks: the share that gives the most
 * samples/s by a model of one epoch, fed with what the loaders measured. Pure; the daemon applies the choice.
 *
 * <p>The model: of the node's {@code samples} per epoch, those held decoded cost a decoded read; the others cost the
 * encoded read and the decode, and their encoded bytes come from the tier while the rest of it holds them, from the
 * object store beyond that. An epoch takes the longer of the loaders' CPU seconds over the cores they have and the
 * bytes from the store over the rate reads of encoded samples were measured at. A share that beats none by less than
 * {@link #WORTH} leaves the decoded samples off: a read of one costs about what the decode and the encoded read do.
 */
public final class DecodedSplit {
    /**
     * The least gain in samples/s for which decoded samples are kept at all. When the decode is trivial, keeping
     * them trades an encoded read for a decoded read of about the same bytes: the loaders' measures of the two differ
     * by their noise on busy cores, and the daemon's own CPU (which they do not see) is higher for a decoded read,
     * checked and copied, than for a block sent from its file. A JPEG decode gains several times over.
     */
    public static final double WORTH = 1.25;
    private static final int STEPS = 20;
    /** Room for all decoded samples: their mean size times this, as sizes vary about their mean. */
    private static final double ROOM = 1.05;

    private DecodedSplit() {
    }

    /**
     * What the loaders measured, per sample: {@code decodeSeconds} (a decode), {@code decodedReadSeconds} (a decoded
     * sample read back and turned into its objects), {@code encodedReadSeconds} (an encoded read's CPU, its waits
     * not counted); {@code decodedBytes} and {@code encodedBytes}, a sample's size each way (decoded, as its entry holds it on disk); {@code samples} the node
     * reads per epoch, on {@code cores} cores; {@code encodedBytesPerSecond}, the rate encoded reads came at (infinite
     * when not measured).
     */
    public record Measures(long samples, double decodeSeconds, double decodedReadSeconds, double encodedReadSeconds,
            double decodedBytes, double encodedBytes, int cores, double encodedBytesPerSecond) {
    }

    /**
     * The share of the tier for decoded samples, the bytes that lends them (no more than they all take), the samples/s
     * the model predicts with it and with none, and why, in one sentence.
     */
    public record Choice(double share, long lentBytes, double samplesPerSecond, double noneSamplesPerSecond, String reason) {
    }

    /** The samples/s the model predicts with {@code share} (0 to 1) of a tier of {@code capacity} bytes decoded. */
    public static double predict(Measures m, long capacity, double share) {
        long n = m.samples();
        if (n <= 0) {
            return 0;
        }
        double lent = lent(m, capacity, share);
        double decoded = Math.min(n, Math.floor(lent / Math.max(1, m.decodedBytes())));
        double encoded = n - decoded;
        double cpu = decoded * m.decodedReadSeconds() + encoded * (m.decodeSeconds() + m.encodedReadSeconds());
        double fromStore = Math.max(0, encoded * m.encodedBytes() - (capacity - lent));
        double io = Double.isInfinite(m.encodedBytesPerSecond()) || m.encodedBytesPerSecond() <= 0 ? 0 : fromStore / m.encodedBytesPerSecond();
        double epoch = Math.max(cpu / Math.max(1, m.cores()), io);
        return epoch <= 0 ? Double.POSITIVE_INFINITY : n / epoch;
    }

    private static double lent(Measures m, long capacity, double share) {
        return Math.min(share * capacity, m.samples() * m.decodedBytes() * ROOM);
    }

    /** The share with the most samples/s (the smaller on a tie), or none when it gains less than {@link #WORTH}. */
    public static Choice choose(Measures m, long capacity) {
        double none = predict(m, capacity, 0);
        double best = 0;
        double bestRate = none;
        double all = m.samples() * m.decodedBytes() * ROOM / Math.max(1, capacity); // the share that holds them all
        for (int i = 0; i <= STEPS + 1; i++) {
            double share = i <= STEPS ? (double) i / STEPS : Math.min(1, all);
            double rate = predict(m, capacity, share);
            if (rate > bestRate * 1.000001 || (rate >= bestRate * 0.999999 && share < best && rate > none)) {
                best = share;
                bestRate = rate;
            }
        }
        String costs = String.format(Locale.ROOT, "a decode takes %.2f ms and a decoded read %.2f ms per sample (%s decoded, %s encoded)",
                m.decodeSeconds() * 1e3, m.decodedReadSeconds() * 1e3, Sizes.format((long) m.decodedBytes()), Sizes.format((long) m.encodedBytes()));
        if (best == 0 || bestRate < none * WORTH) {
            return new Choice(0, 0, none, none, String.format(Locale.ROOT,
                    "off: %s, so keeping them would give at most %.0f samples/s against %.0f without", costs, bestRate, none));
        }
        return new Choice(best, (long) Math.ceil(lent(m, capacity, best)), bestRate, none, String.format(Locale.ROOT,
                "%.3g%% of the tier decoded: %s, which gives %.0f samples/s against %.0f without (%d samples on this node, %s held decoded of %s)",
                best * 100, costs, bestRate, none, m.samples(), Sizes.format((long) lent(m, capacity, best)), Sizes.format(capacity)));
    }
}
