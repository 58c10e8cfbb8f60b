package dev.ferry.sim;

import dev.ferry.cache.policy.Policies;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.StringReader;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class SimulatorTest {
    private static List<Access> parse(String text) throws Exception {
        return TraceParser.parse(new BufferedReader(new StringReader(text)), "trace.txt");
    }

    @Test
    void parse_skipsCommentsAndBlankLines() throws Exception {
        assertThat(parse("# a trace\n\nshard-1 100\n  shard-2\t200  \n")).containsExactly(
                new Access("shard-1", 100), new Access("shard-2", 200));
    }

    @Test
    void parse_badLines_nameTheLineAndTheProblem() {
        assertThatThrownBy(() -> parse("a 1\nb\n")).hasMessage("trace.txt line 2: expected 'KEY SIZE_BYTES', found 1 field: 'b'");
        assertThatThrownBy(() -> parse("a 1\n# c\nb 12x\n")).hasMessage("trace.txt line 3: size '12x' is not a whole number of bytes");
        assertThatThrownBy(() -> parse("a -5\n")).hasMessage("trace.txt line 1: size -5 is negative");
        assertThatThrownBy(() -> parse("a 1 2\n")).hasMessage("trace.txt line 1: expected 'KEY SIZE_BYTES', found 3 fields: 'a 1 2'");
    }

    @Test
    void synthetic_everyEpochIsAPermutation_andEpochsDiffer() {
        List<Access> trace = SyntheticTrace.shuffledEpochs(50, 3, 10, 1);
        assertThat(trace).hasSize(150);
        for (int e = 0; e < 3; e++) {
            assertThat(trace.subList(e * 50, (e + 1) * 50).stream().map(Access::key).collect(Collectors.toSet())).hasSize(50);
        }
        assertThat(trace.subList(0, 50)).isNotEqualTo(trace.subList(50, 100));
        assertThat(SyntheticTrace.shuffledEpochs(50, 3, 10, 1)).isEqualTo(trace); // seeded: the same every time
    }

    /**
     * On shuffled epochs with half the dataset cached, LRU thrashes while pin and MIN reach the optimum. Every
     * object is read once per epoch, so every reuse interval spans the epoch boundary, where at most
     * capacity of them can be cached: no policy hits more than capacity per epoch after the first.
     */
    @Test
    void shuffledEpochs_halfCached_pinAndMinReachTheBound_lruThrashes() {
        List<Access> trace = SyntheticTrace.shuffledEpochs(1000, 3, 1, 42);
        List<String> future = trace.stream().map(Access::key).toList();
        SimResult lru = CacheSimulator.run(trace, 500, Policies.create("lru", future));
        SimResult pin = CacheSimulator.run(trace, 500, Policies.create("pin", future));
        SimResult min = CacheSimulator.run(trace, 500, Policies.create("min", future));
        // epoch 1 is all misses; in epochs 2 and 3 pin hits exactly its 500 objects each time
        assertThat(pin.hits()).isEqualTo(1000);
        assertThat(min.hits()).isEqualTo(1000);
        assertThat(lru.hitRate()).isLessThan(0.8 * pin.hitRate());
    }
}
