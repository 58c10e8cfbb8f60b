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
}
