package dev.ferry.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The tail rule on hand-made epochs: a p99 far above p50 with misses and room for more reads in flight. */
class TailAdviceTest {
    static EpochReport epoch(int n, double p50, double p99, double hitBytes) {
        return new EpochReport(n, 1000, 100, 100, p50, p99, 1, 0.9, hitBytes, 1 << 20, 10, 0.01, -1, 0, 30, 0.5, 0.1, 0.1, null);
    }

    static Advisor.Context context(double inFlight) {
        return new Advisor.Context(1L << 30, 1L << 29, 4, 16, 3, 0.09 / 1e9, c -> 0, inFlight, 0.5);
    }

    static List<String> tail(List<EpochReport> epochs, Advisor.Context context) {
        List<String> out = new ArrayList<>();
        Advisor.tail(epochs, context, out);
        return out;
    }

    @Test
    void aLongTailWithMissesAndRoomInFlight_saysPrefetchIsTooShallow() {
        List<String> f = tail(List.of(epoch(1, 5, 300, 0), epoch(2, 0.2, 250, 0.7)), context(3.0));
        assertThat(f).hasSize(1);
        assertThat(f.get(0)).contains("Prefetch is too shallow").contains("prefetch-bytes").contains("3.0 reads in flight on average of 16");
        assertThat(tail(List.of(epoch(1, 5, 300, 0), epoch(2, 0.2, 250, 0.7)), context(Double.NaN)).get(0)).doesNotContain("in flight");
    }

    @Test
    void noTail_whenFirstEpochOnly_everyByteWasLocal_theWaitsAreEven_orTheReadsAreAtTheirLimit() {
        assertThat(tail(List.of(epoch(1, 0.2, 250, 0.7)), context(3))).isEmpty();
        assertThat(tail(List.of(epoch(1, 5, 300, 0), epoch(2, 0.2, 250, 1.0)), context(3))).isEmpty();
        assertThat(tail(List.of(epoch(1, 5, 300, 0), epoch(2, 40, 60, 0.7)), context(3))).isEmpty();
        assertThat(tail(List.of(epoch(1, 5, 300, 0), epoch(2, 0.2, 250, 0.7)), context(15))).isEmpty();
    }
}
