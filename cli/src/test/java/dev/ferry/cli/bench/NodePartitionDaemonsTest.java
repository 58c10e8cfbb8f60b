package dev.ferry.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.plan.PlanConfig;
import dev.ferry.sim.ClusterSim;
import dev.ferry.store.Prices;
import dev.ferry.time.Clock;
import java.nio.file.Path;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Four daemons, each on its own (no group), reading by the node partition: the corpus leaves the origin once,
 * later epochs read local disks, the simulator agrees within 10%; and a job that loses its last node halfway
 * through an epoch resumes on three, every sample read exactly once.
 */
class NodePartitionDaemonsTest {
    static final PlanConfig NODE = PlanConfig.DEFAULT.withPartition(PlanConfig.Partition.NODE);

    // 48 shards x 16 samples of 16-32 KiB (about 20 MiB), 1 MiB blocks, 10 MiB of cache per node: a share (5 MiB) fits
    static LoopbackCluster.Setup setup(PlanConfig plan, int killNode, int killEpoch, boolean plans, boolean resize) {
        return new LoopbackCluster.Setup(4, 48, 16, 16 * 1024, 10L << 20, 1 << 20, 3, 5, killNode, killEpoch, plans, plan, false, resize);
    }

    @Test
    void inAGroup_eachNodeReadsItsOwnShardsFromTheOrigin_notThroughTheirRendezvousOwner(@TempDir Path dir) throws Exception {
        LoopbackCluster.Setup s = new LoopbackCluster.Setup(4, 48, 16, 16 * 1024, 10L << 20, 1 << 20, 3, 5, -1, 0, true, NODE, true, false);
        LoopbackCluster.Result real = LoopbackCluster.run(dir, s, Clock.system());
        long dataset = real.manifest().totalBytes();
        List<LoopbackCluster.Epoch> e = real.epochs();
        assertThat(real.failures()).isEmpty();
        assertThat(e.get(0).egressBytes()).as("epoch 1 reads the dataset once").isBetween(dataset, dataset + dataset / 50);
        for (int i = 0; i < 3; i++) {
            assertThat(e.get(i).peerBytes()).as("epoch %d: no shard of this node comes through a peer", i + 1).isZero();
        }
        assertThat(e.get(1).egressBytes()).isZero();
        assertThat(e.get(2).egressBytes()).isZero();
        List<ClusterSim.Epoch> sim = ClusterSim.run(real.manifest(), new ClusterSim.Config(s.nodes(), s.cachePerNode(), s.blockSize(),
                s.epochs(), "lru", true, 1.0, s.plan(), ClusterSim.TimeModel.defaults(0.01, 4), Prices.AWS_S3_STANDARD, real.members()));
        for (int i = 0; i < 3; i++) {
            assertThat((double) sim.get(i).egressBytes()).as("epoch %d egress: sim vs real", i + 1)
                    .isCloseTo((double) e.get(i).egressBytes(), Offset.offset(0.10 * dataset));
            assertThat(sim.get(i).peerBytes()).isZero();
        }
    }

    @Test
    void theCorpusLeavesTheOriginOnce_laterEpochsReadLocalDisks_andTheSimulatorAgrees(@TempDir Path dir) throws Exception {
        LoopbackCluster.Setup s = setup(NODE, -1, 0, true, false);
        LoopbackCluster.Result real = LoopbackCluster.run(dir, s, Clock.system());
        long dataset = real.manifest().totalBytes();
        List<LoopbackCluster.Epoch> e = real.epochs();
        assertThat(real.failures()).isEmpty();
        // whole 1 MiB blocks of each node's own shards: at most the shards' sizes rounded up to blocks
        assertThat(e.get(0).egressBytes()).as("epoch 1 reads the dataset once").isBetween(dataset, dataset + dataset / 50);
        for (int i = 1; i < 3; i++) {
            assertThat(e.get(i).egressBytes()).as("epoch %d egress", i + 1).isZero();
            assertThat(e.get(i).cacheHitRate()).as("epoch %d local hits", i + 1).isEqualTo(1.0);
            assertThat(e.get(i).peerBytes()).isZero();
        }
        List<ClusterSim.Epoch> sim = ClusterSim.run(real.manifest(), new ClusterSim.Config(s.nodes(), s.cachePerNode(), s.blockSize(),
                s.epochs(), "min", false, 1.0, s.plan(), ClusterSim.TimeModel.defaults(0.01, 4), Prices.AWS_S3_STANDARD, null));
        for (int i = 0; i < 3; i++) {
            assertThat(sim.get(i).cacheHitRate()).as("epoch %d hit rate: sim vs real", i + 1)
                    .isCloseTo(e.get(i).cacheHitRate(), Offset.offset(0.10 * Math.max(0.05, e.get(i).cacheHitRate())));
            assertThat((double) sim.get(i).egressBytes()).as("epoch %d egress: sim vs real", i + 1)
                    .isCloseTo((double) e.get(i).egressBytes(), Offset.offset(0.10 * dataset));
            assertThat(e.get(i).missingSamples()).isZero();
            assertThat(e.get(i).extraReads()).isZero();
        }
        assertThat(e.get(0).egressRequests()).as("one request per block").isEqualTo(sim.get(0).originRequests());
    }

    /**
     * Issue 24 item 6: tiers of half a share (2.5 MiB against 5 MiB), the shuffle block fitted to the tier as the
     * daemon's registration fits it: later epochs fetch about the dataset less the tiers, and the simulator, fed
     * the same plan, agrees with the real daemons within 10% of their egress.
     */
    @Test
    void tiersSmallerThanAShare_egressNearTheFloor_andTheSimulatorAgreesWithinTenPercent(@TempDir Path dir) throws Exception {
        long tier = 5L << 19;
        PlanConfig fitted = NODE.withShuffleBlockShards(PlanConfig.shuffleBlockFittingTier(tier, 5L << 20, 24 * 16 * 1024));
        assertThat(fitted.shuffleBlockShards()).isEqualTo(1);
        LoopbackCluster.Setup s = new LoopbackCluster.Setup(4, 48, 16, 16 * 1024, tier, 1 << 20, 3, 5, -1, 0, true, fitted, false, false);
        LoopbackCluster.Result real = LoopbackCluster.run(dir, s, Clock.system());
        long dataset = real.manifest().totalBytes();
        List<LoopbackCluster.Epoch> e = real.epochs();
        assertThat(real.failures()).isEmpty();
        List<ClusterSim.Epoch> sim = ClusterSim.run(real.manifest(), new ClusterSim.Config(s.nodes(), s.cachePerNode(), s.blockSize(),
                s.epochs(), "min", false, 1.0, s.plan(), ClusterSim.TimeModel.defaults(0.01, 4), Prices.AWS_S3_STANDARD, null));
        assertThat(e.get(0).egressBytes()).as("epoch 1 reads the dataset once").isBetween(dataset, dataset + dataset / 50);
        double floor = dataset - 4.0 * tier;
        for (int i = 0; i < 3; i++) {
            assertThat((double) sim.get(i).egressBytes()).as("epoch %d egress: sim vs real", i + 1)
                    .isCloseTo((double) e.get(i).egressBytes(), Offset.offset(0.10 * e.get(i).egressBytes()));
            assertThat(e.get(i).missingSamples()).isZero();
            assertThat(e.get(i).extraReads()).isZero();
            if (i > 0) {
                assertThat((double) e.get(i).egressBytes()).as("epoch %d against the floor", i + 1).isBetween(floor, 1.3 * floor);
            }
        }
    }

    @Test
    void fourNodesToThreeMidEpoch_resumesExactly_sampleBySample(@TempDir Path dir) throws Exception {
        // 12 canonical nodes: 4 and 3 both divide it, so every read stays on its node before and after
        LoopbackCluster.Result real = LoopbackCluster.run(dir, setup(NODE.withCanonicalNodes(12), 3, 2, true, true), Clock.system());
        assertThat(real.failures()).isEmpty();
        for (LoopbackCluster.Epoch e : real.epochs()) {
            assertThat(e.failedReads()).isZero();
            assertThat(e.missingSamples()).as("epoch %d: no sample skipped", e.epoch()).isZero();
            assertThat(e.extraReads()).as("epoch %d: no sample read twice beyond padding", e.epoch()).isZero();
        }
        assertThat(real.epochs().get(1).samples()).isGreaterThanOrEqualTo(real.manifest().totalSamples());
    }
}
