package dev.ferry.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class PartitionAdviceTest {
    static final long GIB = 1L << 30;

    @Test
    void theGlobalPlanFetchingMoreThanTheDatasetLaterOn_pointsAtTheNodePartition() {
        List<String> advice = Advisor.partition("global", 8, 64 * GIB, List.of(
                new Advisor.PartitionEpoch(1, 510 * GIB, 0.8, 0.05), new Advisor.PartitionEpoch(2, 510 * GIB, 0.8, 0.05)));
        assertThat(advice).hasSize(1);
        assertThat(advice.get(0)).contains("partition: node").contains("8.0x the 64.0 GiB dataset");
        assertThat(Advisor.partition("global", 8, 64 * GIB, List.of(new Advisor.PartitionEpoch(1, 510 * GIB, 0.8, 0.5)))).isEmpty();
        assertThat(Advisor.partition("global", 1, 64 * GIB, List.of(new Advisor.PartitionEpoch(1, 64 * GIB, 0, 0.5),
                new Advisor.PartitionEpoch(2, 64 * GIB, 0, 0.5)))).isEmpty();
    }

    @Test
    void theNodePartition_saysWhenMixingIsLow_andWhenTheTiersAreSmallerThanAShare() {
        List<String> advice = Advisor.partition("node", 8, 64 * GIB, List.of(
                new Advisor.PartitionEpoch(1, 64 * GIB, 0.0, 0.1), new Advisor.PartitionEpoch(2, 32 * GIB, 0.5, 0.1)));
        assertThat(advice).hasSize(2);
        assertThat(advice.get(0)).contains("shuffle_block_shards").contains("canonical_nodes");
        assertThat(advice.get(1)).contains("smaller than each node's share").contains("8.4 GiB");
        assertThat(Advisor.partition("node", 8, 64 * GIB, List.of(
                new Advisor.PartitionEpoch(1, 64 * GIB, 0.0, 0.6), new Advisor.PartitionEpoch(2, 0, 1.0, 0.6)))).isEmpty();
    }
}
