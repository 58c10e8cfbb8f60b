package dev.ferry.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class PartitionAdviceTest {
    static final long GIB = 1L << 30;

    private static Advisor.Cluster cluster(String partition, int nodes, long tierPerNode) {
        return new Advisor.Cluster(partition, nodes, 64 * GIB, tierPerNode, false);
    }

    private static Advisor.PartitionEpoch epoch(int n, long egress, double localHits, double mix) {
        return new Advisor.PartitionEpoch(n, egress, localHits, mix, egress / 1e9 * 0.09);
    }

    @Test
    void theGlobalPlanFetchingMoreThanTheDatasetLaterOn_pointsAtTheNodePartition() {
        List<String> advice = Advisor.partition(cluster("global", 8, 0), List.of(epoch(1, 510 * GIB, 0.8, 0.05), epoch(2, 510 * GIB, 0.8, 0.05)));
        assertThat(advice).hasSize(1);
        assertThat(advice.get(0)).contains("partition: node").contains("8.0x the 64.0 GiB dataset");
        assertThat(Advisor.partition(cluster("global", 8, 0), List.of(epoch(1, 510 * GIB, 0.8, 0.5)))).isEmpty();
        assertThat(Advisor.partition(cluster("global", 1, 0), List.of(epoch(1, 64 * GIB, 0, 0.5), epoch(2, 64 * GIB, 0, 0.5)))).isEmpty();
    }

    @Test
    void theNodePartition_saysWhenMixingIsLow_andWhenTheTiersAreSmallerThanAShare() {
        List<String> advice = Advisor.partition(cluster("node", 8, 0), List.of(epoch(1, 64 * GIB, 0.0, 0.1), epoch(2, 32 * GIB, 0.5, 0.1)));
        assertThat(advice).hasSize(2);
        assertThat(advice.get(0)).contains("shuffle_block_shards").contains("canonical_nodes");
        assertThat(advice.get(1)).contains("smaller than each node's share").contains("8.4 GiB");
        assertThat(Advisor.partition(cluster("node", 8, 0), List.of(epoch(1, 64 * GIB, 0.0, 0.6), epoch(2, 0, 1.0, 0.6)))).isEmpty();
    }

    /**
     * ferry sim's 8 nodes of 4 GiB over 64 GiB: 99% of reads hit the tier, yet half the corpus streams through every
     * epoch. The finding names the tier that ends it (a share and its held room, less the tier), the shared tier that
     * would instead (the dataset less all tiers), and what each later epoch costs until then.
     */
    @Test
    void tiersSmallerThanAShare_withAHighHitRate_sayHowMuchMoreTierEndsTheEgress_andWhatItSaves() {
        long egress = 34 * GIB;
        List<String> advice = Advisor.partition(cluster("node", 8, 4 * GIB),
                List.of(epoch(1, 64 * GIB, 0.975, 0.5), epoch(2, egress, 0.987, 0.5), epoch(3, egress, 0.987, 0.5)));
        assertThat(advice).hasSize(1);
        assertThat(advice.get(0)).contains("smaller than each node's share (8.0 GiB)").contains("99% of reads hit")
                .contains("4.4 GiB more local tier per node (8.4 GiB each, now 4.0 GiB)").contains("a shared tier of 32.0 GiB")
                .contains("saving 34.0 GiB (about $3.29) per epoch.");

        // tiers that hold a share: nothing to say about them, whatever the hit rate
        assertThat(Advisor.partition(cluster("node", 8, 16 * GIB), List.of(epoch(1, 64 * GIB, 0.9, 0.5), epoch(2, 0, 1.0, 0.5)))).isEmpty();
        // the first epoch's egress is the corpus itself, not a sign of a short tier
        assertThat(Advisor.partition(cluster("node", 8, 4 * GIB), List.of(epoch(1, 64 * GIB, 0.975, 0.5)))).isEmpty();
    }

    @Test
    void aDaemonsView_comparesWithItsShare_andSaysTheSavingIsThisNodes() {
        List<String> advice = Advisor.partition(new Advisor.Cluster("node", 8, 64 * GIB, 4 * GIB, true),
                List.of(epoch(1, 8 * GIB, 0.97, 0.5), epoch(2, 4 * GIB, 0.98, 0.5)));
        assertThat(advice).hasSize(1);
        assertThat(advice.get(0)).contains("saving 4.0 GiB").contains("per epoch on this node.");
    }
}
