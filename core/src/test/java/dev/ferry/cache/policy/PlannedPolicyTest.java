package dev.ferry.cache.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.sim.Access;
import dev.ferry.sim.CacheSimulator;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The position-driven MIN: equal to MIN when the position follows the accesses, LRU without a plan. */
class PlannedPolicyTest {
    /** Runs a unit-weight trace, moving the consumer's position past each access before reporting it. */
    private static long hits(List<String> trace, int capacity, PlannedPolicy<String> policy) {
        Set<String> resident = new HashSet<>();
        long hits = 0;
        for (int i = 0; i < trace.size(); i++) {
            String k = trace.get(i);
            policy.advanceTo(i + 1);
            if (resident.contains(k)) {
                hits++;
                policy.onHit(k);
                continue;
            }
            boolean full = resident.size() >= capacity;
            if (!policy.admit(k, 1, full)) {
                continue;
            }
            if (full) {
                String victim = policy.victim(x -> true);
                resident.remove(victim);
                policy.onRemove(victim);
            }
            resident.add(k);
            policy.onAdd(k, 1);
        }
        return hits;
    }

    @Test
    void matchesMinWhenThePositionFollowsTheAccesses() {
        Random random = new Random(11);
        for (int round = 0; round < 200; round++) {
            int keys = 3 + random.nextInt(30);
            List<String> trace = new ArrayList<>();
            for (int i = 0; i < 20 + random.nextInt(200); i++) {
                trace.add("k" + random.nextInt(keys));
            }
            int capacity = 1 + random.nextInt(keys);
            PlannedPolicy<String> planned = new PlannedPolicy<>();
            planned.plan(trace);
            List<Access> accesses = trace.stream().map(k -> new Access(k, 1)).toList();
            long min = CacheSimulator.run(accesses, capacity, new MinPolicy<>(trace)).hits();
            assertThat(hits(trace, capacity, planned)).as("round %d", round).isEqualTo(min);
        }
    }

    @Test
    void withoutAPlanItIsLru() {
        List<String> trace = List.of("a", "b", "c", "a", "d", "b", "a", "e", "c", "a");
        for (int capacity = 1; capacity <= 5; capacity++) {
            List<Access> accesses = trace.stream().map(k -> new Access(k, 1)).toList();
            long lru = CacheSimulator.run(accesses, capacity, new LruPolicy<>()).hits();
            assertThat(hits(trace, capacity, new PlannedPolicy<>())).isEqualTo(lru);
        }
    }

    @Test
    void evictsTheBlockNeededLastAndFollowsThePosition() {
        PlannedPolicy<String> p = new PlannedPolicy<>();
        p.plan(List.of("a", "b", "c", "a", "b", "c"));
        p.onAdd("a", 1);
        p.onAdd("b", 1);
        p.onAdd("c", 1);
        // at 0 every block is next needed at its first use: c (at 2) is needed last
        assertThat(p.victim(x -> true)).isEqualTo("c");
        p.advanceTo(1); // a was read: its next use is 3, after c's 2
        assertThat(p.victim(x -> true)).isEqualTo("a");
        p.advanceTo(6); // the plan is done: nothing is needed again, so the least recently used goes
        assertThat(p.victim(x -> true)).isEqualTo("a");
        p.onHit("a");
        assertThat(p.victim(x -> true)).isEqualTo("b");
    }

    @Test
    void unplannedReadsDoNotPushOutPlannedBlocks() {
        PlannedPolicy<String> p = new PlannedPolicy<>();
        p.plan(List.of("a", "b"));
        p.onAdd("a", 1);
        p.onAdd("b", 1);
        assertThat(p.admit("stranger", 1, true)).isFalse();
        assertThat(p.admit("stranger", 1, false)).isTrue();
    }

    private static final long MS = 1_000_000;

    @Test
    void oneNamedJobIsExactlyTheSinglePlan() {
        Random random = new Random(5);
        for (int round = 0; round < 100; round++) {
            List<String> trace = new ArrayList<>();
            for (int i = 0; i < 20 + random.nextInt(150); i++) {
                trace.add("k" + random.nextInt(20));
            }
            int capacity = 1 + random.nextInt(20);
            PlannedPolicy<String> sole = new PlannedPolicy<>();
            sole.plan(trace);
            long expected = hits(trace, capacity, sole);
            // the same trace as one named job reporting with a clock: the clock must not change a thing
            PlannedPolicy<String> named = new PlannedPolicy<>(1);
            named.plan("train", trace, 0);
            Set<String> resident = new HashSet<>();
            long hits = 0;
            for (int i = 0; i < trace.size(); i++) {
                String k = trace.get(i);
                named.advanceTo("train", i + 1, (long) i * i * MS); // an erratic pace
                if (resident.contains(k)) {
                    hits++;
                    named.onHit(k);
                    continue;
                }
                boolean full = resident.size() >= capacity;
                if (!named.admit(k, 1, full)) {
                    continue;
                }
                if (full) {
                    String victim = named.victim(x -> true);
                    resident.remove(victim);
                    named.onRemove(victim);
                }
                resident.add(k);
                named.onAdd(k, 1);
            }
            assertThat(hits).as("round %d", round).isEqualTo(expected);
        }
    }

    @Test
    void aBlockIsNeededAtTheSoonestUseOverTheJobs() {
        PlannedPolicy<String> p = new PlannedPolicy<>(Long.MAX_VALUE / 4);
        p.plan("train", List.of("a", "b", "c", "d"), 0);
        for (String k : List.of("a", "b", "c", "d")) {
            p.onAdd(k, 1);
        }
        // one plan: d is read last (index 3)
        assertThat(p.victim(x -> true)).isEqualTo("d");
        // eval reads d first: unmeasured, both go 1 ms a block from time 0: a 0, b 1, c 2, d min(3, 0) = 0 ms
        p.plan("eval", List.of("d"), 0);
        assertThat(p.victim(x -> true)).isEqualTo("c");
        p.forget("eval");
        assertThat(p.victim(x -> true)).isEqualTo("d");
        assertThat(p.jobs()).containsExactly("train");
    }

    @Test
    void jobsAreComparedInTime_notInBlocksAhead() {
        PlannedPolicy<String> p = new PlannedPolicy<>(Long.MAX_VALUE / 4);
        List<String> train = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            train.add("t" + i);
        }
        p.plan("train", train, 0);
        p.plan("eval", List.of("e0", "e1", "e2"), 0);
        p.advanceTo("train", 1, 1 * MS); // 1 ms a block
        p.advanceTo("eval", 1, 100 * MS); // 100 ms a block
        assertThat(p.nanosPerBlock("train")).isEqualTo(1 * MS);
        assertThat(p.nanosPerBlock("eval")).isEqualTo(100 * MS);
        p.onAdd("t5", 1);
        p.onAdd("e2", 1);
        // blocks ahead: t5 is 4 ahead of train, e2 1 ahead of eval, so t5 would go; in time t5 is due at
        // 5 ms, e2 at 200 ms: e2 goes
        assertThat(p.victim(x -> true)).isEqualTo("e2");
        // and e2 is not admitted over t5 when room must be made; t5 over e2 would be
        p.onRemove("e2");
        assertThat(p.admit("e2", 1, true)).isFalse();
    }

    @Test
    void aStalledJobIsExpectedToResumeNow_notToHaveReadOn() {
        for (long tolerance : new long[] {10 * MS, Long.MAX_VALUE / 4}) {
            PlannedPolicy<String> p = new PlannedPolicy<>(tolerance);
            List<String> train = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                train.add("t" + i);
            }
            p.plan("train", train, 0);
            p.advanceTo("train", 1, 1 * MS); // 1 ms a block, then silent
            p.plan("eval", List.of("e0", "e1", "e2"), 990 * MS);
            p.advanceTo("eval", 1, 995 * MS); // 5 ms a block: e2 due at 990 + 2 x 5 = 1000 ms
            p.onAdd("t20", 1);
            p.onAdd("e2", 1);
            if (tolerance == 10 * MS) {
                // train, silent since 1 ms, was re-anchored when eval planned (at 990 ms): t20 due 990 + 19 = 1009 ms
                assertThat(p.victim(x -> true)).isEqualTo("t20");
            } else {
                // never re-anchored: t20 "due" at 20 ms, long past, so it looks the most urgent
                assertThat(p.victim(x -> true)).isEqualTo("e2");
            }
        }
    }

    @Test
    void withSeveralJobs_aBlockIsAdmittedOnlyWhenNeededAgainSoonerThanTheFarthest() {
        PlannedPolicy<String> p = new PlannedPolicy<>(Long.MAX_VALUE / 4);
        p.plan("train", List.of("a", "b", "c", "d"), 0); // a 0, b 1, c 2, d 3 ms (1 ms a block, unmeasured)
        p.plan("eval", List.of("x", "y", "x", "z"), 0); // x 0 and 2, y 1, z 3 ms
        p.onAdd("a", 1);
        p.onAdd("d", 1); // the farthest resident: 3 ms
        assertThat(p.admit("stranger", 1, true)).as("nobody plans it").isFalse();
        assertThat(p.admit("x", 1, true)).as("read now, again at 2 ms, before d").isTrue();
        assertThat(p.admit("y", 1, true)).as("read now and never again: streamed through").isFalse();
        assertThat(p.admit("c", 1, true)).as("train's read of c now, never again").isFalse();
        assertThat(p.admit("y", 1, false)).as("free room takes anything").isTrue();
        p.onAdd("stranger", 1); // now the farthest resident is unplanned
        assertThat(p.admit("y", 1, true)).as("still not worth an eviction").isFalse();
        assertThat(p.admit("c", 1, true)).isFalse();
        assertThat(p.admit("x", 1, true)).isTrue();
    }
}
