package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.ferry.metrics.EpochReport;
import dev.ferry.metrics.RunReport;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The demo's one-line verdict from known epochs: busy is the time not spent waiting, egress after epoch 1 against the floor. */
class DemoVerdictTest {
    /** An epoch of 1,000 samples over {@code seconds}, waiting {@code share} of it, egressing {@code egress} bytes. */
    static EpochReport epoch(int n, double seconds, double share, long egress) {
        return new EpochReport(n, 1000, 100, 1000 / seconds, 1, 2, share * seconds, 0.5, 0.5, egress, 10, 0.01, -1, 0, 30, 0.5, share, share, null);
    }

    @Test
    void judgesTheEpochsAfterTheFirst_weightedByTheirLength() {
        RunReport direct = new RunReport(List.of(epoch(1, 10, 0.8, 1000), epoch(2, 10, 0.8, 1000), epoch(3, 10, 0.8, 1000)), List.of());
        // epoch 2 takes 4 s waiting a quarter, epoch 3 takes 2 s waiting none: busy (3 + 2) / 6
        RunReport ferry = new RunReport(List.of(epoch(1, 10, 0.5, 1000), epoch(2, 4, 0.25, 500), epoch(3, 2, 0, 520)), List.of());
        DemoVerdict v = DemoVerdict.of(direct, ferry, 1000, List.of(1000L, 500L, 500L), 533.3);
        assertThat(v.ferryBusy()).isCloseTo(5.0 / 6, within(1e-9));
        assertThat(v.directBusy()).isCloseTo(0.2, within(1e-9));
        assertThat(v.egressShare()).isCloseTo(0.51, within(1e-9));
        assertThat(v.floorShare()).isCloseTo(0.5, within(1e-9));
        assertThat(v.line()).isEqualTo("found: through ferry the accelerator was busy 83% of the time against 20% read directly (epochs 2-3);"
                + " egress after epoch 1: 0.51x the dataset per epoch, the plan's floor for a tier of its size 0.50x;"
                + " the accelerator could take 533 samples/s");
    }

    @Test
    void aRunOfOneEpoch_isJudgedOnIt_withNoEgressAfterIt() {
        RunReport direct = new RunReport(List.of(epoch(1, 10, 0.9, 1000)), List.of());
        RunReport ferry = new RunReport(List.of(epoch(1, 5, 0.4, 1000)), List.of());
        assertThat(DemoVerdict.of(direct, ferry, 1000, null, 100).line())
                .isEqualTo("found: through ferry the accelerator was busy 60% of the time against 10% read directly (epoch 1);"
                        + " the accelerator could take 100 samples/s");
    }
}
