package dev.ferry.decoded;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DecodedSplitTest {
    private static final long GIB = 1L << 30;

    /** 20,000 samples of 110 KiB encoded, 150 KiB decoded, on 2 cores. */
    private static DecodedSplit.Measures measures(double decode, double decodedRead, double rate) {
        return new DecodedSplit.Measures(20_000, decode, decodedRead, 0.0002, 150 << 10, 110 << 10, 2, rate);
    }

    @Test
    void whenDecodeIsTheBoundAndAllFitsEverySampleIsKeptDecodedAndTheRestOfTheTierHoldsBlocks() {
        DecodedSplit.Measures m = measures(0.008, 0.0005, Double.POSITIVE_INFINITY);
        DecodedSplit.Choice c = DecodedSplit.choose(m, 8 * GIB);
        assertThat(c.lentBytes()).isEqualTo((long) Math.ceil(20_000L * (150 << 10) * 1.05)); // all of them, and a little room
        assertThat(c.samplesPerSecond()).isGreaterThan(5 * c.noneSamplesPerSecond());
        assertThat(c.reason()).startsWith("37.6% of the tier decoded: a decode takes 8.00 ms and a decoded read 0.50 ms per sample");
    }

    @Test
    void aTrivialDecodeLeavesThemOff() {
        DecodedSplit.Choice c = DecodedSplit.choose(measures(0.00001, 0.0003, Double.POSITIVE_INFINITY), 8 * GIB);
        assertThat(c.share()).isZero();
        assertThat(c.lentBytes()).isZero();
        assertThat(c.reason()).startsWith("off: a decode takes 0.01 ms and a decoded read 0.30 ms per sample");
    }

    @Test
    void aTierTooSmallForAllDecodedGoesAllDecodedWhenTheStoreKeepsUp() {
        // 20,000 x 150 KiB = 2.9 GiB decoded; a 1 GiB tier
        DecodedSplit.Choice c = DecodedSplit.choose(measures(0.008, 0.0005, 1e9), GIB);
        assertThat(c.share()).isEqualTo(1.0);
        for (double s = 0; s < 1; s += 0.25) {
            assertThat(DecodedSplit.predict(measures(0.008, 0.0005, 1e9), GIB, s)).isLessThan(c.samplesPerSecond());
        }
    }

    @Test
    void aSlowStoreSplitsTheTierWhereTheDecodesAndTheStoreTakeAsLong() {
        // the store gives 10 MiB/s: encoded bytes the tier lacks cost more than decodes from about half decoded on
        DecodedSplit.Measures m = measures(0.004, 0.0005, 10 << 20);
        long tier = 20_000L * (110 << 10); // exactly the encoded dataset
        DecodedSplit.Choice c = DecodedSplit.choose(m, tier);
        assertThat(c.share()).isBetween(0.45, 0.55);
        assertThat(c.samplesPerSecond()).isGreaterThan(1.5 * DecodedSplit.predict(m, tier, 1.0))
                .isGreaterThan(1.2 * c.noneSamplesPerSecond());
    }

    @Test
    void nothingMeasuredPredictsNothing() {
        assertThat(DecodedSplit.predict(new DecodedSplit.Measures(0, 0, 0, 0, 0, 0, 2, 0), GIB, 0.5)).isZero();
    }
}
