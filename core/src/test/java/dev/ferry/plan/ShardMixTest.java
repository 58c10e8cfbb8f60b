package dev.ferry.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ShardMixTest {
    @Test
    void expectedDistinct_smallCaseByHand() {
        // 2 shards of 2 samples, draw 2 without replacement: P(both from one shard) = 2 / C(4,2) = 1/3,
        // so E[distinct] = 1/3 * 1 + 2/3 * 2 = 5/3
        Manifest m = NodePartitionTest.equalShards(2, 2);
        assertThat(ShardMix.expectedDistinct(m, 2)).isCloseTo(5.0 / 3, within(1e-12));
        assertThat(ShardMix.expectedDistinct(m, 3)).isCloseTo(2.0, within(1e-12));
    }

    @Test
    void aFullShuffle_scoresAboutOne_andTheNodePartitionMixesMoreThanTheGlobalPlanAtTheSameBlock() {
        Manifest m = NodePartitionTest.equalShards(64, 100);
        PlanConfig full = PlanConfig.DEFAULT.withPartition(PlanConfig.Partition.GLOBAL).withShuffleBlockShards(64);
        assertThat(ShardMix.of(EpochPlan.of(m, full, 1), 64)).isCloseTo(1.0, within(0.05));
        double global = ShardMix.of(EpochPlan.of(m, PlanConfig.DEFAULT.withPartition(PlanConfig.Partition.GLOBAL), 1), 64);
        double node = ShardMix.of(EpochPlan.of(m, NodePartitionTest.node(8), 1), 64);
        assertThat(global).isLessThan(0.25); // 64 samples from about 4 open shards, where uniform draws meet about 40
        assertThat(node).isGreaterThan(2 * global); // 8 canonical nodes, each with its own block of 4 shards open
    }
}
