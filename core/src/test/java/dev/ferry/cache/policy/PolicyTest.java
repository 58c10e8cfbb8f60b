package dev.ferry.cache.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.sim.Access;
import dev.ferry.sim.CacheSimulator;
import dev.ferry.cache.policy.Policies;
import dev.ferry.sim.SimResult;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Hand-traced cases (expected hits worked out in the comments), MIN against every other policy on random
 * traces, and MIN against a brute-force optimum on tiny traces.
 */
class PolicyTest {
    private static List<Access> unit(String keys) {
        List<Access> trace = new ArrayList<>();
        for (String k : keys.split(" ")) {
            trace.add(new Access(k, 1));
        }
        return trace;
    }

    private static SimResult run(String policy, List<Access> trace, long capacity) {
        List<String> future = trace.stream().map(Access::key).toList();
        return CacheSimulator.run(trace, capacity, Policies.create(policy, future));
    }

    /*
     * Capacity 2, trace A B C A B C (a loop one larger than the cache):
     *  LRU:   A miss [A], B miss [A B], C miss evicts A [B C], A miss evicts B [C A], B miss evicts C, C miss: 0 hits.
     *  pin:   A, B admitted; C bypassed; A hit, B hit, C bypassed: 2 hits.
     *  MIN:   A, B admitted; C: next use at 5, residents A@3 B@4: C is farthest, bypass; A hit, B hit,
     *         C miss (never used again): 2 hits.
     *  SIEVE: A, B in; C: hand at A (unvisited) evicts A [B C]; A: hand at B evicts B [C A]; B: hand at C
     *         evicts C [A B]; C: hand at A evicts A: 0 hits.
     */
    @Test
    void loopOneLargerThanTheCache() {
        List<Access> trace = unit("A B C A B C");
        assertThat(run("lru", trace, 2).hits()).isEqualTo(0);
        assertThat(run("pin", trace, 2).hits()).isEqualTo(2);
        assertThat(run("min", trace, 2).hits()).isEqualTo(2);
        assertThat(run("sieve", trace, 2).hits()).isEqualTo(0);
    }

    /*
     * Capacity 2, trace A B A C A B:
     *  LRU: A, B miss [A B]; A hit [B A]; C miss evicts B [A C]; A hit [C A]; B miss evicts C: 2 hits.
     *  pin: A, B in; A hit; C bypassed; A hit; B hit: 3 hits.
     *  MIN: A, B in; A hit; C (never again) bypassed; A hit; B hit: 3 hits.
     *  SIEVE: A, B in; A hit sets A's bit; C: hand at A (visited: clear) moves to B (unvisited) evicts B
     *         [A C]; A hit; B: hand at C (unvisited) evicts C [A B]: 2 hits.
     */
    @Test
    void frequentlyUsedEntryWithOneIntruder() {
        List<Access> trace = unit("A B A C A B");
        assertThat(run("lru", trace, 2).hits()).isEqualTo(2);
        assertThat(run("pin", trace, 2).hits()).isEqualTo(3);
        assertThat(run("min", trace, 2).hits()).isEqualTo(3);
        assertThat(run("sieve", trace, 2).hits()).isEqualTo(2);
    }

    /*
     * Capacity 2, trace A B C B C A: the working set moves.
     *  pin keeps A, B: B hit, C bypassed, A hit: 2 hits.
     *  MIN: A, B in; C: next use 4, residents A@5, B@3: A is farthest, evict A [B C]; B hit, C hit; A miss: 2 hits.
     *  LRU: A, B; C evicts A [B C]; B hit; C hit; A miss: 2 hits.
     */
    @Test
    void movingWorkingSet() {
        List<Access> trace = unit("A B C B C A");
        assertThat(run("lru", trace, 2).hits()).isEqualTo(2);
        assertThat(run("pin", trace, 2).hits()).isEqualTo(2);
        assertThat(run("min", trace, 2).hits()).isEqualTo(2);
    }

    @Test
    void byteWeights_countBytesAndNeverAdmitWhatCannotFit() {
        List<Access> trace = List.of(new Access("big", 100), new Access("s1", 10), new Access("s2", 10),
                new Access("big", 100), new Access("s1", 10));
        SimResult lru = run("lru", trace, 50); // big never fits; s1, s2 fit: s1 hits once
        assertThat(lru.hits()).isEqualTo(1);
        assertThat(lru.hitBytes()).isEqualTo(10);
        assertThat(lru.upstreamBytes()).isEqualTo(220);
        assertThat(lru.byteHitRate()).isEqualTo(10.0 / 230);
    }

    @Test
    void victim_skipsEntriesTheCacheMayNotEvict() {
        for (String name : List.of("lru", "sieve", "min")) {
            EvictionPolicy<String> p = Policies.create(name, List.of("A", "B", "C", "A", "B"));
            for (String k : List.of("A", "B")) {
                assertThat(p.admit(k, 1, false)).isTrue();
                p.onAdd(k, 1);
            }
            String first = p.victim(k -> true);
            String other = first.equals("A") ? "B" : "A";
            assertThat(p.victim(k -> !k.equals(first))).as(name).isEqualTo(other);
            assertThat(p.victim(k -> false)).as(name).isNull();
        }
    }

    /** MIN hits at least as often as every other policy, on random traces with random capacities. */
    @Test
    void min_isNeverBeatenByAnotherPolicy_onRandomUnitTraces() {
        Random random = new Random(20261202);
        for (int round = 0; round < 300; round++) {
            int keys = 2 + random.nextInt(12);
            int length = 5 + random.nextInt(200);
            List<Access> trace = new ArrayList<>();
            for (int i = 0; i < length; i++) {
                trace.add(new Access("k" + (int) Math.floor(Math.pow(random.nextDouble(), 1.5) * keys), 1));
            }
            long capacity = 1 + random.nextInt(keys);
            long min = run("min", trace, capacity).hits();
            for (String other : List.of("lru", "pin", "sieve")) {
                assertThat(min).as("round %d: min vs %s", round, other).isGreaterThanOrEqualTo(run(other, trace, capacity).hits());
            }
        }
    }

    /** MIN equals the optimum found by trying every admit/evict choice, on tiny unit-size traces. */
    @Test
    void min_equalsBruteForceOptimum_onTinyTraces() {
        Random random = new Random(7);
        for (int round = 0; round < 400; round++) {
            int keys = 2 + random.nextInt(4);
            int length = 1 + random.nextInt(11);
            int[] trace = new int[length];
            for (int i = 0; i < length; i++) {
                trace[i] = random.nextInt(keys);
            }
            int capacity = 1 + random.nextInt(keys - 1);
            List<Access> accesses = Arrays.stream(trace).mapToObj(k -> new Access("k" + k, 1)).toList();
            long min = run("min", accesses, capacity).hits();
            long opt = optimum(trace, 0, 0, capacity, new HashMap<>());
            assertThat(min).as("round %d: %s capacity %d", round, Arrays.toString(trace), capacity).isEqualTo(opt);
        }
    }

    /** Most hits from position {@code i} on, with {@code resident} as a bit set of keys. */
    private static long optimum(int[] trace, int i, int resident, int capacity, Map<Long, Long> memo) {
        if (i == trace.length) {
            return 0;
        }
        long state = ((long) i << 32) | resident;
        Long known = memo.get(state);
        if (known != null) {
            return known;
        }
        int bit = 1 << trace[i];
        long best;
        if ((resident & bit) != 0) {
            best = 1 + optimum(trace, i + 1, resident, capacity, memo);
        } else {
            best = optimum(trace, i + 1, resident, capacity, memo); // bypass
            if (Integer.bitCount(resident) < capacity) {
                best = Math.max(best, optimum(trace, i + 1, resident | bit, capacity, memo));
            } else {
                for (int v = resident; v != 0; v &= v - 1) {
                    int victim = Integer.lowestOneBit(v);
                    best = Math.max(best, optimum(trace, i + 1, (resident & ~victim) | bit, capacity, memo));
                }
            }
        }
        memo.put(state, best);
        return best;
    }
}
