package dev.ferry.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.ferry.store.ObjectKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
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

    /** The definition, term by term: {@code sum over shards of 1 - prod_{i<m} (n - n_s - i) / (n - i)}. */
    private static double expectedDistinctByProduct(Manifest manifest, int m) {
        long n = manifest.totalSamples();
        double expected = 0;
        for (Shard s : manifest.shards()) {
            double miss = 1;
            for (int i = 0; i < m; i++) {
                miss *= Math.max(0, (double) (n - s.samples() - i)) / (n - i);
            }
            expected += 1 - miss;
        }
        return expected;
    }

    @Test
    void expectedDistinct_inOnePass_agreesWithTheProductOverRandomManifests() {
        Random random = new Random(3);
        for (int round = 0; round < 200; round++) {
            List<Shard> shards = new ArrayList<>();
            for (int i = 0, count = 1 + random.nextInt(30); i < count; i++) {
                shards.add(new Shard(ObjectKey.of("data", "s" + i), 1000, "e", 1 + random.nextInt(random.nextBoolean() ? 5 : 200)));
            }
            Manifest m = new Manifest(shards);
            int draw = 1 + random.nextInt(m.totalSamples());
            assertThat(ShardMix.expectedDistinct(m, draw)).as("round %d", round).isCloseTo(expectedDistinctByProduct(m, draw), within(1e-9));
        }
    }

    @Test
    void expectedDistinct_ofThousandsOfShardSizesAndABigDraw_isExactEnough() {
        // shards of 1, 2, ..., 2,000 samples (2,001,000) drawn 1,000,000 at a time: the product took 2 x 10^9 terms
        List<Shard> shards = new ArrayList<>();
        for (int size = 1; size <= 2000; size++) {
            shards.add(new Shard(ObjectKey.of("data", "s" + size), 1000, "e", size));
        }
        Manifest m = new Manifest(shards);
        double e = ShardMix.expectedDistinct(m, 1_000_000);
        // a shard of k samples is missed with probability about 2^-k: all but about one shard are met
        assertThat(e).isCloseTo(2000 - 1, within(0.01));
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
