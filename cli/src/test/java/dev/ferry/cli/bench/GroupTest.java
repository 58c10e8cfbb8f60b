package dev.ferry.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.plan.PlanConfig;
import dev.ferry.sim.ClusterSim;
import dev.ferry.store.Prices;
import dev.ferry.time.Clock;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Four daemons on loopback ports as one regional group over one origin: with the group's caches together
 * larger than the dataset, epochs after the first cost almost no origin egress, the simulator predicts the
 * run within 10% (hit rate and egress), and a member closed mid-epoch costs refetches, not failed reads.
 */
class GroupTest {
    // 48 shards x 16 samples of 16-32 KiB (about 20 MiB), 1 MiB blocks, 10 MiB of cache per node (40 MiB in all):
    // each member owns about 5 MiB, with room for the unevenness of ownership whatever ports the daemons get
    // (with 8 MiB, some port sets leave one member owning more than its cache keeps: the simulator predicts that too)
    static LoopbackCluster.Setup setup(int killNode, int killEpoch, boolean plans) {
        return LoopbackCluster.Setup.globalGroup(4, 48, 16, 16 * 1024, 10L << 20, 1 << 20, 3, 5, killNode, killEpoch, plans);
    }

    @Test
    void laterEpochsComeFromTheGroupAndTheSimulatorAgrees(@TempDir Path dir) throws Exception {
        LoopbackCluster.Result real = LoopbackCluster.run(dir, setup(-1, 0, false), Clock.system());
        long dataset = real.manifest().totalBytes();
        List<LoopbackCluster.Epoch> e = real.epochs();
        assertThat(real.failures()).isEmpty();
        assertThat(e.get(0).egressBytes()).as("epoch 1 reads the dataset once").isBetween(dataset, dataset + dataset / 10);
        assertThat(e.get(1).egressBytes()).as("epoch 2 egress").isLessThan(dataset / 20);
        assertThat(e.get(2).egressBytes()).as("epoch 3 egress").isLessThan(dataset / 20);
        assertThat(e.get(1).peerBytes()).as("reads of other members' objects come from them").isPositive();

        LoopbackCluster.Setup s = setup(-1, 0, false);
        List<ClusterSim.Epoch> sim = ClusterSim.run(real.manifest(), new ClusterSim.Config(s.nodes(), s.cachePerNode(), s.blockSize(),
                s.epochs(), "lru", true, 1.0, s.plan(), ClusterSim.TimeModel.defaults(0.01, 4),
                Prices.AWS_S3_STANDARD, real.members()));
        for (int i = 0; i < 3; i++) {
            assertThat(sim.get(i).cacheHitRate()).as("epoch %d hit rate: sim vs real", i + 1)
                    .isCloseTo(e.get(i).cacheHitRate(), org.assertj.core.data.Offset.offset(0.10 * Math.max(0.05, e.get(i).cacheHitRate())));
            assertThat((double) sim.get(i).egressBytes()).as("epoch %d egress: sim vs real", i + 1)
                    .isCloseTo((double) e.get(i).egressBytes(), org.assertj.core.data.Offset.offset(0.10 * dataset));
        }
    }

    @Test
    void aMemberClosedMidEpochCostsRefetchesNotFailedReads_andPlansSteerReadsToLastEpochsReader(@TempDir Path dir) throws Exception {
        LoopbackCluster.Result real = LoopbackCluster.run(dir, setup(2, 3, true), Clock.system());
        long dataset = real.manifest().totalBytes();
        assertThat(real.failures()).as("reads of the surviving nodes").isEmpty();
        LoopbackCluster.Epoch third = real.epochs().get(2);
        assertThat(third.failedReads()).isZero();
        assertThat(third.egressBytes()).as("refetching the closed member's share, at most").isPositive().isLessThan(dataset / 3);
        LoopbackCluster.Epoch second = real.epochs().get(1);
        assertThat(second.hintedBytes()).as("blocks read from the member that read them last epoch").isPositive();
        assertThat(second.egressBytes()).isLessThan(dataset / 20);
    }
}
