package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.cache.policy.EvictionPolicy;
import dev.ferry.cache.policy.Policies;
import dev.ferry.sim.Access;
import dev.ferry.sim.CacheSimulator;
import dev.ferry.sim.SimResult;
import dev.ferry.sim.SyntheticTrace;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local tier and the simulator run the same policy classes, so on a trace of one-block objects with the
 * watermarks at capacity they must agree hit for hit.
 */
class CacheMatchesSimulatorTest {
    static final int BLOCK = 4096;

    @TempDir
    Path tmp;

    @Test
    void everyPolicy_hitsExactlyWhatTheSimulatorPredicts() throws IOException {
        FileObjectStore origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("sim");
        int objects = 40;
        Map<String, ObjectMeta> metas = new HashMap<>();
        for (int i = 0; i < objects; i++) {
            String name = String.format("obj-%07d", i);
            metas.put(name, origin.put(ObjectKey.of("sim", name), PutBody.ofBytes(CachingStoreTest.random(BLOCK, i))));
        }
        List<Access> trace = SyntheticTrace.shuffledEpochs(objects, 4, BLOCK, 5);
        List<String> names = trace.stream().map(Access::key).toList();
        List<BlockId> blocks = names.stream().map(n -> new BlockId(metas.get(n).key(), metas.get(n).etag(), 0)).toList();
        long capacity = 15L * BLOCK;
        for (String policyName : List.of("lru", "pin", "sieve", "min")) {
            SimResult predicted = CacheSimulator.run(trace, capacity, Policies.create(policyName, names));
            EvictionPolicy<BlockId> policy = Policies.create(policyName, blocks);
            CacheConfig config = CacheConfig.of(tmp.resolve("cache-" + policyName), capacity).withBlockSize(BLOCK).withWatermarks(1.0, 1.0);
            try (CachingStore cache = new CachingStore(origin, config, policy, Clock.system())) {
                for (String n : names) {
                    cache.readBytes(metas.get(n).key(), null);
                }
                assertThat(cache.stats().hits()).as(policyName).isEqualTo(predicted.hits());
            }
        }
    }

    @Test
    void minByName_isRefusedWithoutAPlan() {
        assertThatThrownBy(() -> new CachingStore(new FileObjectStore(tmp.resolve("o")), CacheConfig.of(tmp.resolve("c"), 1 << 20).withPolicy("min")))
                .hasMessageContaining("policy min needs the future access sequence");
    }
}
