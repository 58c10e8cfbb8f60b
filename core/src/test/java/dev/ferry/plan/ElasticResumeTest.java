package dev.ferry.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.cache.BlockId;
import dev.ferry.store.ObjectKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A world change mid-epoch with the homes of the world in progress ({@link CanonicalHomes}): exact sample by sample, and
 * the extra egress is the share that had to move. Egress is measured on tiers that hold everything a node has
 * read (so only movement costs): epoch 1 on the old world warms them, the change comes halfway through epoch 2,
 * epoch 3 runs on the new world; the extra egress is what epochs 2 and 3 fetch.
 */
class ElasticResumeTest {
    static final int BLOCK = 256 << 10;

    static Manifest corpus(int shards) {
        List<Shard> list = new ArrayList<>();
        for (int i = 0; i < shards; i++) {
            list.add(new Shard(ObjectKey.of("data", String.format("train/shard-%04d.tar", i)), 1 << 20, "v1", 64));
        }
        return new Manifest(list);
    }

    @Test
    void homes_startAtCModNodes_andMoveOnlyWhatMust() {
        CanonicalHomes four = CanonicalHomes.of(12, 4);
        assertThat(four.standard()).isTrue();
        CanonicalHomes three = four.resized(3);
        assertThat(countOn(three, 3)).containsExactly(4, 4, 4);
        // only the departed node's three canonical nodes move
        int moved = 0;
        for (int c = 0; c < 12; c++) {
            moved += four.nodeOf(c) != three.nodeOf(c) ? 1 : 0;
            if (four.nodeOf(c) != 3) {
                assertThat(three.nodeOf(c)).as("canonical node %d stays", c).isEqualTo(four.nodeOf(c));
            }
        }
        assertThat(moved).isEqualTo(3);
        assertThat(CanonicalHomes.of(12, 3).moved(CanonicalHomes.of(12, 4))).as("c mod nodes: 9 of 12 move").isEqualTo(9);
        CanonicalHomes grown = CanonicalHomes.of(12, 3).resized(4);
        assertThat(countOn(grown, 4)).containsExactly(3, 3, 3, 3);
        int grownMoved = 0;
        for (int c = 0; c < 12; c++) {
            grownMoved += grown.nodeOf(c) != c % 3 ? 1 : 0;
        }
        assertThat(grownMoved).as("3 -> 4 moves a quarter").isEqualTo(3);
        assertThat(CanonicalHomes.of(12, 4).resized(4)).isEqualTo(CanonicalHomes.of(12, 4));
        assertThat(CanonicalHomes.parse(three.toArray(), 3)).isEqualTo(three);
        assertThatThrownBy(() -> CanonicalHomes.parse(new int[] {0, 3}, 3)).hasMessageContaining("canonical node 1's home must be 0 to 2");
    }

    static int[] countOn(CanonicalHomes homes, int nodes) {
        int[] count = new int[nodes];
        for (int c = 0; c < homes.canonical(); c++) {
            count[homes.nodeOf(c)]++;
        }
        return count;
    }

    /** The egress of a world change: tiers that keep every block their node read. */
    record Change(long extraEgress, long mustMove, double localShareAfter, double localShareNextEpoch) {
        double ratio() {
            return (double) extraEgress / mustMove;
        }
    }

    static Change change(Manifest m, PlanConfig config, int from, int to, boolean recordHomes) {
        World before = new World(from, 1, 1);
        World after = new World(to, 1, 1);
        CanonicalHomes old = CanonicalHomes.of(config.canonical(), from);
        CanonicalHomes next = recordHomes ? old.resized(to) : CanonicalHomes.of(config.canonical(), to);
        List<Set<BlockId>> held = new ArrayList<>();
        for (int n = 0; n < Math.max(from, to); n++) {
            held.add(new HashSet<>());
        }
        long[] egress = {0};
        EpochPlan e1 = EpochPlan.of(m, config, 1);
        read(e1, e1.deal(before, 0, old), Integer.MAX_VALUE, held, egress);
        egress[0] = 0;
        EpochPlan e2 = EpochPlan.of(m, config, 2);
        int half = e2.steps(0, before.ranks()) / 2 + 1; // inside a round: the rest of it follows the old world's order
        Map<Integer, Integer> seen = new HashMap<>();
        readSamples(e2, e2.deal(before, 0, old), half, seen);
        read(e2, e2.deal(before, 0, old), half, held, egress);
        long consumed = (long) half * before.ranks();
        for (int n = to; n < from; n++) {
            held.get(n).clear(); // the departed node's tier goes with it
        }
        RankAssignment rest = e2.deal(after, consumed, next, e2.deal(before, 0, old).roundHomesAt(consumed));
        readSamples(e2, rest, Integer.MAX_VALUE, seen);
        read(e2, rest, Integer.MAX_VALUE, held, egress);
        // exact: no sample of epoch 2 twice across the change, and none skipped but the new world's drop
        assertThat(seen.values()).allMatch(v -> v == 1);
        assertThat((long) e2.size() - seen.size()).isEqualTo((e2.size() - consumed) % after.ranks());
        EpochPlan e3 = EpochPlan.of(m, config, 3);
        RankAssignment third = e3.deal(after, 0, next);
        read(e3, third, Integer.MAX_VALUE, held, egress);
        // the share that had to move: the departed nodes' canonical nodes, or what the new ones take
        long mustMove = 0;
        int[] home = EpochPlan.assignment(m, config.canonical());
        for (int s = 0; s < home.length; s++) {
            boolean moves = to < from ? old.nodeOf(home[s]) >= to : next.nodeOf(home[s]) >= from;
            mustMove += moves ? m.shards().get(s).size() : 0;
        }
        return new Change(egress[0], mustMove, rest.localShare(), third.localShare());
    }

    static void readSamples(EpochPlan plan, RankAssignment deal, int steps, Map<Integer, Integer> seen) {
        for (int t = 0; t < Math.min(steps, deal.steps()); t++) {
            for (int r = 0; r < deal.world().ranks(); r++) {
                seen.merge(deal.sample(r, t), 1, Integer::sum);
            }
        }
    }

    static void read(EpochPlan plan, RankAssignment deal, int steps, List<Set<BlockId>> held, long[] egress) {
        List<BlockRead> blocks = new ArrayList<>();
        for (int t = 0; t < Math.min(steps, deal.steps()); t++) {
            for (int r = 0; r < deal.world().ranks(); r++) {
                blocks.clear();
                plan.addBlocks(deal.sample(r, t), BLOCK, blocks);
                Set<BlockId> mine = held.get(deal.world().nodeOf(r));
                for (BlockRead b : blocks) {
                    if (mine.add(b.block())) {
                        egress[0] += BLOCK; // 1 MiB shards of 256 KiB blocks: every block is whole
                    }
                }
            }
        }
    }

    /** Two world changes, each at a random step (often inside a round), the homes carried as a checkpoint carries them. */
    @Test
    void worldChanges_withRecordedHomes_readEverySampleOnce() {
        Random random = new Random(11);
        for (int round = 0; round < 200; round++) {
            int canonical = 1 + random.nextInt(12);
            Manifest m = corpus(canonical + random.nextInt(40));
            PlanConfig config = PlanConfig.DEFAULT.withSeed(round).withPartition(PlanConfig.Partition.NODE).withCanonicalNodes(canonical)
                    .withShuffleBlockShards(1 + random.nextInt(4)).withUneven(PlanConfig.Uneven.DROP);
            EpochPlan plan = EpochPlan.of(m, config, 1 + random.nextInt(3));
            World world = new World(1 + random.nextInt(6), 1 + random.nextInt(2), 1);
            CanonicalHomes homes = CanonicalHomes.of(canonical, world.nodes());
            CanonicalHomes roundHomes = homes;
            long consumed = 0;
            Map<Integer, Integer> seen = new HashMap<>();
            for (int change = 0; change < 3; change++) {
                RankAssignment deal = plan.deal(world, consumed, homes, roundHomes);
                int steps = change == 2 ? deal.steps() : random.nextInt(deal.steps() + 1);
                readSamples(plan, deal, steps, seen);
                consumed += (long) steps * world.ranks();
                roundHomes = deal.roundHomesAt(consumed);
                world = new World(1 + random.nextInt(6), 1 + random.nextInt(2), 1);
                homes = homes.resized(world.nodes());
            }
            assertThat(seen.values()).as("round %d: no sample twice", round).allMatch(v -> v == 1);
            assertThat(plan.size() - seen.size()).as("round %d: skipped only the last world's drop", round).isLessThan(12);
        }
    }

    @Test
    void fourToThree_andThreeToFour_withTheWorldInProgress_moveOnlyTheShareThatMust() {
        Manifest m = corpus(48);
        PlanConfig twelve = PlanConfig.DEFAULT.withSeed(7).withPartition(PlanConfig.Partition.NODE).withCanonicalNodes(12)
                .withUneven(PlanConfig.Uneven.DROP);
        Change shrink = change(m, twelve, 4, 3, true);
        Change grow = change(m, twelve, 3, 4, true);
        assertThat(shrink.mustMove()).isEqualTo(m.totalBytes() / 4);
        assertThat(grow.mustMove()).isEqualTo(m.totalBytes() / 4);
        assertThat(shrink.ratio()).as("4 -> 3: %s", shrink).isLessThanOrEqualTo(1.1);
        assertThat(grow.ratio()).as("3 -> 4: %s", grow).isLessThanOrEqualTo(1.1);
        // the rest of the round in progress follows the old world's order (a few reads leave their node), then every read is local
        assertThat(shrink.localShareAfter()).isGreaterThan(0.99);
        assertThat(grow.localShareAfter()).isGreaterThan(0.99);
        assertThat(shrink.localShareNextEpoch()).isEqualTo(1.0);
        assertThat(grow.localShareNextEpoch()).isEqualTo(1.0);
        // c mod nodes on the new world moves 9 of 12 canonical nodes
        Change unrecorded = change(m, twelve, 4, 3, false);
        assertThat(unrecorded.ratio()).as("without the homes: %s", unrecorded).isGreaterThan(2.5);
        System.out.printf("4 -> 3 over 12 canonical nodes: extra egress %.3fx the departed share (c mod nodes: %.3fx); 3 -> 4: %.3fx%n",
                shrink.ratio(), unrecorded.ratio(), grow.ratio());
        PlanConfig four = twelve.withCanonicalNodes(4);
        Change c4 = change(m, four, 4, 3, true);
        System.out.printf("4 -> 3 over 4 canonical nodes: extra egress %.3fx the departed share, local share after %.3f, next epoch %.3f%n",
                c4.ratio(), c4.localShareAfter(), c4.localShareNextEpoch());
    }
}
