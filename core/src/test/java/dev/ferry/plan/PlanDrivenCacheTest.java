package dev.ferry.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CacheStats;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.policy.Policies;
import dev.ferry.sim.EgressPrediction;
import dev.ferry.sim.SimResult;
import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job reading its plan through the local tier fetches from upstream, epoch by epoch, exactly the bytes
 * the prediction (the plan's block future through the simulator) said it would, for every policy.
 */
class PlanDrivenCacheTest {
    static final int BLOCK = 16 * 1024;

    @TempDir
    Path tmp;

    @Test
    void upstreamBytesPerEpoch_equalThePrediction() throws IOException {
        FileObjectStore origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        Random random = new Random(11);
        List<Shard> shards = new ArrayList<>();
        List<byte[]> contents = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            byte[] bytes = new byte[3 * BLOCK + random.nextInt(2 * BLOCK)];
            random.nextBytes(bytes);
            ObjectMeta meta = origin.put(ObjectKey.of("data", "train/shard-" + i + ".tar"), PutBody.ofBytes(bytes));
            shards.add(new Shard(meta.key(), meta.size(), meta.etag(), 5 + random.nextInt(10)));
            contents.add(bytes);
        }
        Manifest manifest = new Manifest(shards);
        PlanConfig config = PlanConfig.DEFAULT.withSeed(7);
        World world = World.single();
        int epochs = 3;
        List<List<BlockRead>> future = EgressPrediction.nodeBlocksByEpoch(manifest, config, epochs, world, 0, BLOCK);
        long capacity = manifest.totalBytes() / 2;
        for (String policy : List.of("lru", "pin", "min")) {
            List<SimResult> predicted = EgressPrediction.predict(manifest, future, capacity, policy, BLOCK);
            CacheConfig cacheConfig = CacheConfig.of(tmp.resolve("cache-" + policy), capacity).withBlockSize(BLOCK).withWatermarks(1.0, 1.0);
            try (CachingStore cache = new CachingStore(origin, cacheConfig,
                    Policies.create(policy, EgressPrediction.flatten(future)), Clock.system())) {
                for (int e = 1; e <= epochs; e++) {
                    CacheStats before = cache.stats();
                    EpochPlan plan = EpochPlan.of(manifest, config.forWorld(world), e);
                    for (int sample : plan.rankSamples(world, 0, 0)) {
                        Shard shard = manifest.shards().get(plan.shardOf(sample));
                        int index = plan.indexInShard(sample);
                        long from = shard.size() * index / shard.samples();
                        long to = shard.size() * (index + 1) / shard.samples();
                        if (to == from) {
                            continue;
                        }
                        try (ObjectContent c = cache.get(new GetRequest(shard.key(), ByteRange.of(from, to - from), shard.etag()))) {
                            assertThat(c.stream().readAllBytes()).isEqualTo(
                                    Arrays.copyOfRange(contents.get(plan.shardOf(sample)), (int) from, (int) to));
                        }
                    }
                    long upstream = cache.stats().bytesFromUpstream() - before.bytesFromUpstream();
                    assertThat(upstream).as("%s epoch %d", policy, e).isEqualTo(predicted.get(e - 1).upstreamBytes());
                }
            }
        }
    }
}
