package dev.ferry.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.cache.BlockId;
import dev.ferry.store.ObjectKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Properties of plans over random manifests, worlds and resume points (seeded, so failures replay). */
class EpochPlanTest {
    static Manifest randomManifest(Random random) {
        int shards = 1 + random.nextInt(40);
        List<Shard> list = new ArrayList<>();
        for (int i = 0; i < shards; i++) {
            int samples = 1 + random.nextInt(random.nextBoolean() ? 5 : 60); // uneven shards
            list.add(new Shard(ObjectKey.of("data", String.format("train/shard-%05d.tar", i)), samples * 1000L + random.nextInt(1000),
                    "etag-" + i, samples));
        }
        return new Manifest(list);
    }

    /** Either partition: global, or the node partition over 1 to 8 canonical nodes, sometimes with mixing. */
    static PlanConfig randomConfig(Random random) {
        PlanConfig.Uneven uneven = random.nextBoolean() ? PlanConfig.Uneven.PAD : PlanConfig.Uneven.DROP;
        if (random.nextInt(3) == 0) {
            return new PlanConfig(random.nextLong(), 1 + random.nextInt(6), uneven, PlanConfig.Partition.GLOBAL, 0, 0);
        }
        return new PlanConfig(random.nextLong(), 1 + random.nextInt(6), uneven, PlanConfig.Partition.NODE, 1 + random.nextInt(8),
                random.nextInt(3) == 0 ? 0.25 : 0);
    }

    static World randomWorld(Random random) {
        return new World(1 + random.nextInt(6), 1 + random.nextInt(4), 1);
    }

    static final PlanConfig GLOBAL = PlanConfig.DEFAULT.withPartition(PlanConfig.Partition.GLOBAL);

    @Test
    void order_isAPermutation_deterministic_andDiffersByEpochAndSeed() {
        Random random = new Random(1);
        for (int round = 0; round < 200; round++) {
            Manifest m = randomManifest(random);
            PlanConfig c = randomConfig(random);
            EpochPlan p = EpochPlan.of(m, c, 1 + random.nextInt(5));
            int[] order = new int[p.size()];
            for (int i = 0; i < order.length; i++) {
                order[i] = p.sampleAt(i);
            }
            int[] sorted = order.clone();
            Arrays.sort(sorted);
            for (int i = 0; i < sorted.length; i++) {
                assertThat(sorted[i]).isEqualTo(i);
            }
            EpochPlan again = EpochPlan.of(m, c, p.epoch());
            for (int i = 0; i < order.length; i++) {
                assertThat(again.sampleAt(i)).isEqualTo(order[i]);
            }
        }
        Manifest big = randomManifest(new Random(2));
        while (big.totalSamples() < 200) {
            big = randomManifest(new Random(big.totalSamples() + 3));
        }
        assertThat(orderOf(EpochPlan.of(big, GLOBAL, 1))).isNotEqualTo(orderOf(EpochPlan.of(big, GLOBAL, 2)));
        assertThat(orderOf(EpochPlan.of(big, GLOBAL, 1))).isNotEqualTo(orderOf(EpochPlan.of(big, GLOBAL.withSeed(9), 1)));
    }

    static int[] orderOf(EpochPlan p) {
        int[] o = new int[p.size()];
        for (int i = 0; i < o.length; i++) {
            o[i] = p.sampleAt(i);
        }
        return o;
    }

    @Test
    void shuffleBlocks_keepFewShardsOpen() {
        Random random = new Random(3);
        for (int round = 0; round < 100; round++) {
            Manifest m = randomManifest(random);
            int k = 1 + random.nextInt(4);
            EpochPlan p = EpochPlan.of(m, GLOBAL.withShuffleBlockShards(k).withSeed(round), 1);
            // walking the order, the set of shards seen since the last block boundary never exceeds k
            Set<Integer> open = new HashSet<>();
            int blockEnd = 0;
            int shardsDone = 0;
            List<Integer> shardOrder = new ArrayList<>();
            for (int i = 0; i < p.size(); i++) {
                int s = p.shardOf(p.sampleAt(i));
                if (i == blockEnd) {
                    open.clear();
                    int blockShards = 0;
                    Set<Integer> inBlock = new HashSet<>();
                    int j = i;
                    while (j < p.size() && (inBlock.contains(p.shardOf(p.sampleAt(j))) || inBlock.size() < k)) {
                        inBlock.add(p.shardOf(p.sampleAt(j)));
                        j++;
                    }
                    blockShards = inBlock.size();
                    blockEnd = i + inBlock.stream().mapToInt(x -> m.shards().get(x).samples()).sum();
                    shardsDone += blockShards;
                }
                open.add(s);
                shardOrder.add(s);
                assertThat(open.size()).isLessThanOrEqualTo(k);
            }
            assertThat(shardsDone).isEqualTo(m.shards().size());
        }
    }

    @Test
    void everyRankStepsEqually_andTheRanksTogetherReadEverySample() {
        Random random = new Random(4);
        for (int round = 0; round < 300; round++) {
            Manifest m = randomManifest(random);
            PlanConfig c = randomConfig(random);
            EpochPlan p = EpochPlan.of(m, c, 1);
            World world = randomWorld(random);
            int ranks = world.ranks();
            Map<Integer, Integer> seen = new HashMap<>();
            int steps = p.steps(0, ranks);
            for (int r = 0; r < ranks; r++) {
                int[] mine = p.rankSamples(world, r, 0);
                assertThat(mine).hasSize(steps);
                for (int s : mine) {
                    seen.merge(s, 1, Integer::sum);
                }
            }
            int n = p.size();
            if (c.uneven() == PlanConfig.Uneven.DROP) {
                assertThat(steps).isEqualTo(n / ranks);
                assertThat(seen.values()).allMatch(v -> v == 1);
                assertThat(n - seen.size()).isBetween(0, ranks - 1);
            } else {
                assertThat(steps).isEqualTo((n + ranks - 1) / ranks);
                assertThat(seen).hasSize(n);
                long repeats = seen.values().stream().mapToLong(v -> v - 1).sum();
                assertThat(repeats).isBetween(0L, (long) ranks - 1);
            }
        }
    }

    /** Resume from any step with any new world size: nothing seen twice, nothing skipped (beyond padding/drop). */
    @Test
    void resume_withADifferentWorldSize_neitherRepeatsNorSkips() {
        Random random = new Random(5);
        for (int round = 0; round < 500; round++) {
            Manifest m = randomManifest(random);
            PlanConfig c = randomConfig(random);
            EpochPlan p = EpochPlan.of(m, c, 1 + random.nextInt(3));
            World worldBefore = randomWorld(random);
            World worldAfter = randomWorld(random);
            int before = worldBefore.ranks();
            int after = worldAfter.ranks();
            int stepsDone = random.nextInt(p.size() / before + 1);
            long consumed = (long) stepsDone * before;
            Map<Integer, Integer> seen = new HashMap<>();
            for (int r = 0; r < before; r++) {
                int[] mine = p.rankSamples(worldBefore, r, 0);
                for (int t = 0; t < stepsDone; t++) {
                    seen.merge(mine[t], 1, Integer::sum);
                }
            }
            for (int r = 0; r < after; r++) {
                for (int s : p.rankSamples(worldAfter, r, consumed)) {
                    seen.merge(s, 1, Integer::sum);
                }
            }
            int n = p.size();
            long remaining = n - consumed;
            if (c.uneven() == PlanConfig.Uneven.DROP) {
                assertThat(seen.values()).as("round %d: no sample twice", round).allMatch(v -> v == 1);
                assertThat(n - seen.size()).as("round %d: skipped only the drop", round).isEqualTo((int) (remaining % after));
            } else {
                assertThat(seen).as("round %d: every sample", round).hasSize(n);
                long repeats = seen.values().stream().mapToLong(v -> v - 1).sum();
                assertThat(repeats).as("round %d: repeats only the padding", round).isEqualTo((after - remaining % after) % after);
            }
        }
    }

    @Test
    void workers_splitTheirRanksBatchesRoundRobin() {
        Random random = new Random(6);
        for (int round = 0; round < 200; round++) {
            Manifest m = randomManifest(random);
            EpochPlan p = EpochPlan.of(m, randomConfig(random), 1);
            World world = randomWorld(random);
            int workers = 1 + random.nextInt(5);
            int batch = 1 + random.nextInt(8);
            int rank = random.nextInt(world.ranks());
            int[] mine = p.rankSamples(world, rank, 0);
            List<Integer> merged = new ArrayList<>();
            int[][] byWorker = new int[workers][];
            int[] cursor = new int[workers];
            for (int w = 0; w < workers; w++) {
                byWorker[w] = p.workerSamples(world, rank, w, workers, batch, 0);
            }
            for (int b = 0; (long) b * batch < mine.length; b++) {
                int w = b % workers;
                int len = Math.min(batch, mine.length - b * batch);
                for (int i = 0; i < len; i++) {
                    merged.add(byWorker[w][cursor[w]++]);
                }
            }
            assertThat(merged).containsExactlyElementsOf(Arrays.stream(mine).boxed().toList());
            for (int w = 0; w < workers; w++) {
                assertThat(cursor[w]).isEqualTo(byWorker[w].length);
            }
        }
    }

    @Test
    void nodeBlocks_coverEverySampleOfTheNodesRanks() {
        List<Shard> shards = List.of(
                new Shard(ObjectKey.of("data", "a.tar"), 10_000, "ea", 10),
                new Shard(ObjectKey.of("data", "b.tar"), 4_000, "eb", 4));
        Manifest m = new Manifest(shards);
        EpochPlan p = EpochPlan.of(m, GLOBAL, 1);
        World world = new World(2, 1, 1);
        List<BlockRead> node0 = p.nodeBlocks(world, 0, 2048, 0);
        List<BlockRead> node1 = p.nodeBlocks(world, 1, 2048, 0);
        // 14 samples of 1,000 bytes over 2 nodes: 7 each; a sample spans 1 or 2 blocks of 2,048 bytes
        assertThat(node0.size()).isBetween(7, 14);
        assertThat(node1.size()).isBetween(7, 14);
        // every byte of every sample is read exactly once across the two nodes
        assertThat(node0.stream().mapToLong(BlockRead::length).sum() + node1.stream().mapToLong(BlockRead::length).sum()).isEqualTo(14_000);
        Set<BlockId> all = new HashSet<>();
        node0.forEach(r -> all.add(r.block()));
        node1.forEach(r -> all.add(r.block()));
        assertThat(all).hasSize(5 + 2); // a.tar has 5 blocks, b.tar 2
        assertThat(all).allSatisfy(b -> assertThat(b.etag()).isIn("ea", "eb"));
    }

    @Test
    void badArguments_sayWhat() {
        Manifest m = new Manifest(List.of(new Shard(ObjectKey.of("data", "a"), 10, "e", 2)));
        assertThatThrownBy(() -> EpochPlan.of(m, GLOBAL, 0)).hasMessage("epoch must be at least 1: 0");
        assertThatThrownBy(() -> EpochPlan.of(m, PlanConfig.DEFAULT, 1)).hasMessageContaining("PlanConfig.forWorld");
        EpochPlan p = EpochPlan.of(m, GLOBAL, 1);
        assertThatThrownBy(() -> p.rankSamples(new World(1, 2, 1), 3, 0)).hasMessage("rank must be 0 to 1: 3");
        assertThatThrownBy(() -> p.rankSamples(World.single(), 0, 5)).hasMessage("start must be 0 to 2 samples: 5");
        assertThatThrownBy(() -> PlanConfig.Partition.parse("rank")).hasMessage("partition must be node, global or auto, not 'rank'");
        assertThatThrownBy(() -> PlanConfig.DEFAULT.withMixFraction(1.5)).hasMessage("mixFraction must be between 0 and 1: 1.5");
        assertThatThrownBy(() -> new Manifest(List.of())).hasMessage("manifest has no shards");
        assertThatThrownBy(() -> new World(0, 1, 1)).hasMessageContaining("must be at least 1");
        assertThatThrownBy(() -> new Shard(ObjectKey.of("data", "a"), 10, "e", 0)).hasMessageContaining("samples must be at least 1");
    }
}
