package dev.ferry.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.store.Prices;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The cluster simulator: the group's effect on egress, and sampling that estimates the full run. */
class ClusterSimTest {
    static ClusterSim.Config config(int nodes, long cachePerNode, boolean group, double rate) {
        return new ClusterSim.Config(nodes, cachePerNode, 1 << 20, 3, "lru", group, rate, PlanConfig.DEFAULT.withSeed(3),
                ClusterSim.TimeModel.defaults(0.05, 32), Prices.AWS_S3_STANDARD, null);
    }

    @Test
    void aGroupWhoseCachesHoldTheDatasetReadsItFromTheOriginOnce() {
        // 256 objects of 4 MiB (1 GiB), 8 nodes with 192 MiB each: 1.5 GiB together, but 19% of the dataset each
        Manifest corpus = ClusterSim.syntheticSample(1L << 30, 4L << 20, 64, 1);
        List<ClusterSim.Epoch> group = ClusterSim.run(corpus, config(8, 192L << 20, true, 1));
        List<ClusterSim.Epoch> alone = ClusterSim.run(corpus, config(8, 192L << 20, false, 1));
        assertThat(group.get(0).egressBytes()).isEqualTo(corpus.totalBytes());
        assertThat(group.get(1).egressBytes()).isLessThan(corpus.totalBytes() / 50);
        assertThat(group.get(2).readerPeerRate()).isGreaterThan(0.5);
        assertThat(alone.get(1).egressBytes()).as("without the group every node fetches what it lacks").isGreaterThan(corpus.totalBytes() * 3);
        assertThat(alone.get(1).readerPeerRate()).isZero();
        assertThat(group.get(1).egressCostUsd()).isLessThan(alone.get(1).egressCostUsd() / 10);
    }

    @Test
    void aSampleEstimatesTheFullRun() {
        // 4,096 objects of 4 MiB (16 GiB), 16 nodes with 1.5 GiB each (a group: 24 GiB in all)
        long dataset = 16L << 30;
        Manifest full = ClusterSim.syntheticSample(dataset, 4L << 20, 16, 1);
        double rate = 0.25;
        Manifest sample = ClusterSim.syntheticSample(dataset, 4L << 20, 16, rate);
        assertThat(sample.shards().size()).isBetween(900, 1150);
        List<ClusterSim.Epoch> f = ClusterSim.run(full, config(16, 1536L << 20, true, 1));
        List<ClusterSim.Epoch> s = ClusterSim.run(sample, config(16, 1536L << 20, true, rate));
        for (int i = 0; i < 3; i++) {
            assertThat(s.get(i).readerPeerRate()).isCloseTo(f.get(i).readerPeerRate(), within(0.05));
            assertThat(s.get(i).cacheHitRate()).isCloseTo(f.get(i).cacheHitRate(), within(0.05));
            assertThat((double) s.get(i).egressBytes()).isCloseTo((double) f.get(i).egressBytes(), within(0.10 * dataset));
            assertThat((double) s.get(i).samples()).isCloseTo((double) f.get(i).samples(), within(0.15 * f.get(i).samples()));
        }
    }
}
