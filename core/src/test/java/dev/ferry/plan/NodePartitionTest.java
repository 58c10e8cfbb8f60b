package dev.ferry.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ObjectKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The node partition: sticky, balanced, local reads, exact and local resume, mixing (seeded, so failures replay). */
class NodePartitionTest {
    static Manifest equalShards(int shards, int samples) {
        List<Shard> list = new ArrayList<>();
        for (int i = 0; i < shards; i++) {
            list.add(new Shard(ObjectKey.of("data", String.format("train/shard-%05d.tar", i)), samples * 1000L, "e" + i, samples));
        }
        return new Manifest(list);
    }

    static PlanConfig node(int canonical) {
        return PlanConfig.DEFAULT.withSeed(7).withPartition(PlanConfig.Partition.NODE).withCanonicalNodes(canonical);
    }

    /** The shards each node reads in an epoch. */
    static List<Set<Integer>> shardsByNode(EpochPlan p, World world, long start) {
        RankAssignment deal = p.deal(world, start);
        List<Set<Integer>> out = new ArrayList<>();
        for (int node = 0; node < world.nodes(); node++) {
            Set<Integer> mine = new HashSet<>();
            for (int local = 0; local < world.ranksPerNode(); local++) {
                for (int s : deal.rankSamples(node * world.ranksPerNode() + local)) {
                    mine.add(p.shardOf(s));
                }
            }
            out.add(mine);
        }
        return out;
    }

    @Test
    void globalPartition_isTheNodePlanOfOneCanonicalNode() {
        Random random = new Random(11);
        for (int round = 0; round < 50; round++) {
            Manifest m = EpochPlanTest.randomManifest(random);
            World world = EpochPlanTest.randomWorld(random);
            long seed = random.nextLong();
            EpochPlan global = EpochPlan.of(m, PlanConfig.DEFAULT.withSeed(seed).withPartition(PlanConfig.Partition.GLOBAL), 2);
            EpochPlan one = EpochPlan.of(m, PlanConfig.DEFAULT.withSeed(seed).withPartition(PlanConfig.Partition.NODE).withCanonicalNodes(1), 2);
            for (int r = 0; r < world.ranks(); r++) {
                assertThat(one.rankSamples(world, r, 0)).isEqualTo(global.rankSamples(world, r, 0));
            }
        }
    }

    @Test
    void auto_isNodeForManyNodes_globalForOne_andKeepsAGivenCount() {
        assertThat(PlanConfig.DEFAULT.forWorld(new World(8, 2, 1))).satisfies(c -> {
            assertThat(c.partition()).isEqualTo(PlanConfig.Partition.NODE);
            assertThat(c.canonical()).isEqualTo(8);
        });
        assertThat(PlanConfig.DEFAULT.forWorld(World.single()).canonical()).isEqualTo(1);
        assertThat(PlanConfig.DEFAULT.withCanonicalNodes(12).forWorld(new World(3, 1, 1)).canonical()).isEqualTo(12);
        assertThat(PlanConfig.DEFAULT.withPartition(PlanConfig.Partition.GLOBAL).forWorld(new World(8, 1, 1)).canonical()).isEqualTo(1);
    }

    @Test
    void assignment_isBalancedBySamplesAndBytes() {
        Random random = new Random(12);
        for (int round = 0; round < 100; round++) {
            Manifest m = EpochPlanTest.randomManifest(random);
            int canonical = 1 + random.nextInt(6);
            int[] home = EpochPlan.assignment(m, canonical);
            long[] samples = new long[canonical];
            int biggest = 0;
            for (int s = 0; s < home.length; s++) {
                samples[home[s]] += m.shards().get(s).samples();
                biggest = Math.max(biggest, m.shards().get(s).samples());
            }
            long max = java.util.Arrays.stream(samples).max().orElseThrow();
            long min = java.util.Arrays.stream(samples).min().orElseThrow();
            assertThat(max - min).as("round %d: greedy keeps nodes within one shard", round).isLessThanOrEqualTo(biggest);
        }
        // 64 equal shards over 8 canonical nodes: 8 each
        int[] home = EpochPlan.assignment(equalShards(64, 100), 8);
        Map<Integer, Integer> count = new HashMap<>();
        for (int c : home) {
            count.merge(c, 1, Integer::sum);
        }
        assertThat(count.values()).containsOnly(8);
    }

    @Test
    void eachNodeReadsOnlyItsOwnShards_theSameEveryEpoch_whenTheNodeCountDividesTheCanonicalCount() {
        Manifest m = equalShards(48, 37);
        for (int[] shape : new int[][] {{4, 4, 1}, {4, 2, 3}, {8, 4, 2}, {12, 3, 4}, {12, 12, 1}}) {
            int canonical = shape[0];
            World world = new World(shape[1], shape[2], 1);
            int[] home = EpochPlan.assignment(m, canonical);
            List<Set<Integer>> first = null;
            for (int epoch = 1; epoch <= 3; epoch++) {
                EpochPlan p = EpochPlan.of(m, node(canonical), epoch);
                assertThat(p.deal(world, 0).localShare()).isEqualTo(1.0);
                List<Set<Integer>> mine = shardsByNode(p, world, 0);
                for (int n = 0; n < world.nodes(); n++) {
                    for (int s : mine.get(n)) {
                        assertThat(home[s] % world.nodes()).as("shard %d read by node %d", s, n).isEqualTo(n);
                    }
                }
                if (first == null) {
                    first = mine;
                } else {
                    assertThat(mine).as("sticky").isEqualTo(first);
                }
            }
        }
    }

    @Test
    void resumeOnFewerNodes_movesOnlyTheLeavingNodesShards_andStaysLocal() {
        Manifest m = equalShards(48, 50);
        PlanConfig c = node(12);
        EpochPlan p = EpochPlan.of(m, c, 2);
        World four = new World(4, 2, 1);
        World two = new World(2, 2, 1);
        World six = new World(6, 1, 1);
        long consumed = 40L * four.ranks();
        List<Set<Integer>> before = shardsByNode(p, four, 0);
        List<Set<Integer>> after = shardsByNode(p, two, consumed);
        // 4 -> 2: canonical c moves from c mod 4 to c mod 2, so nodes 0 and 1 keep what they had
        assertThat(after.get(0)).containsAll(before.get(0));
        assertThat(after.get(1)).containsAll(before.get(1));
        assertThat(p.deal(two, consumed).localShare()).isEqualTo(1.0);
        assertThat(p.deal(six, consumed).localShare()).isEqualTo(1.0);
        // 12 canonical nodes over 5 nodes do not divide: the deal stays exact, some reads leave their node
        assertThat(p.deal(new World(5, 1, 1), consumed).localShare()).isLessThan(1.0).isGreaterThan(0.5);
    }

    @Test
    void mixing_movesAboutTheFractionToAnotherNode_differentlyEachEpoch() {
        Manifest m = equalShards(80, 20);
        World world = new World(4, 1, 1);
        int[] home = EpochPlan.assignment(m, 4);
        List<Set<Integer>> away = new ArrayList<>();
        for (int epoch = 1; epoch <= 3; epoch++) {
            EpochPlan p = EpochPlan.of(m, node(4).withMixFraction(0.25), epoch);
            Set<Integer> moved = new HashSet<>();
            List<Set<Integer>> mine = shardsByNode(p, world, 0);
            for (int n = 0; n < 4; n++) {
                for (int s : mine.get(n)) {
                    if (home[s] != n) {
                        moved.add(s);
                    }
                }
            }
            assertThat(moved).as("epoch %d: a quarter of the shards read away from home", epoch).hasSize(20);
            away.add(moved);
        }
        assertThat(away.get(0)).isNotEqualTo(away.get(1));
        EpochPlan unmixed = EpochPlan.of(m, node(4), 1);
        assertThat(shardsByNode(unmixed, world, 0).get(0)).allMatch(s -> home[s] == 0);
    }

    @Test
    void aNodesOrder_keepsAFewShardsOpenPerCanonicalNode() {
        Manifest m = equalShards(64, 100);
        World world = new World(8, 1, 1);
        EpochPlan p = EpochPlan.of(m, node(8).withShuffleBlockShards(2), 1);
        int[] mine = p.rankSamples(world, 3, 0);
        // one canonical node per node, blocks of 2 shards: every 200 consecutive samples come from 2 shards
        for (int from = 0; from + 200 <= mine.length; from += 200) {
            Set<Integer> open = new HashSet<>();
            for (int i = from; i < from + 200; i++) {
                open.add(p.shardOf(mine[i]));
            }
            assertThat(open).hasSize(2);
        }
    }

    /** Position by position, the canonical node the definition names: round r visits, in order, the nodes with more than r samples. */
    static int[] interleaveByRounds(int[] counts) {
        int total = 0;
        int rounds = 0;
        for (int c : counts) {
            total += c;
            rounds = Math.max(rounds, c);
        }
        int[] out = new int[total];
        int pos = 0;
        for (int round = 0; round < rounds; round++) {
            for (int c = 0; c < counts.length; c++) {
                if (round < counts[c]) {
                    out[pos++] = c;
                }
            }
        }
        return out;
    }

    @Test
    void theOrder_interleavesTheCanonicalNodesRoundByRound() {
        Random random = new Random(5);
        for (int round = 0; round < 100; round++) {
            Manifest m = EpochPlanTest.randomManifest(random);
            int canonical = 2 + random.nextInt(random.nextBoolean() ? 6 : 60); // often more canonical nodes than shards
            EpochPlan p = EpochPlan.of(m, node(canonical).withSeed(random.nextLong()), 1 + random.nextInt(3));
            int[] counts = new int[canonical];
            int[] at = new int[p.size()];
            for (int q = 0; q < p.size(); q++) {
                at[q] = p.canonicalAt(q);
                counts[at[q]]++;
            }
            assertThat(at).as("round %d", round).isEqualTo(interleaveByRounds(counts));
        }
    }

    @Test
    void aHundredThousandCanonicalNodes_oneHoldingAMillionSamples_planInTheTimeOfTheSamples() {
        // the rounds once visited every canonical node: 10^6 rounds x 10^5 nodes, minutes; now the samples plus the nodes
        List<Shard> shards = new ArrayList<>(List.of(new Shard(ObjectKey.of("data", "big.tar"), 1L << 30, "e", 1_000_000)));
        for (int i = 0; i < 10; i++) {
            shards.add(new Shard(ObjectKey.of("data", "small-" + i + ".tar"), 1000, "e", 3));
        }
        EpochPlan p = EpochPlan.of(new Manifest(shards), node(100_000), 1);
        assertThat(p.size()).isEqualTo(1_000_030);
        // the ten small shards' nodes take a sample in each of the first three rounds, then the big one's goes on alone
        int big = EpochPlan.assignment(p.manifest(), 100_000)[0];
        assertThat(p.canonicalAt(p.size() - 1)).isEqualTo(big);
        assertThat(p.canonicalAt(33)).isEqualTo(big);
        assertThat(p.shardOf(p.sampleAt(p.size() - 1))).isZero();
    }
}
