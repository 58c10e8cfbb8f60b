package dev.ferry.sim;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.policy.EvictionPolicy;
import dev.ferry.cache.policy.Policies;
import dev.ferry.plan.BlockRead;
import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.World;
import dev.ferry.store.ObjectKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Predicts, before a run, what each epoch will fetch from upstream on one node: the node's block accesses
 * from the plans, replayed through the simulator with the cache's size and policy. The prediction is what
 * the same policy classes do with the same future, so it is exact for a cache that sees exactly those
 * accesses; prefetch and the watermarks make the real run differ a little.
 */
public final class EgressPrediction {
    private EgressPrediction() {
    }

    /** The node's block accesses, epoch after epoch. */
    public static List<List<BlockRead>> nodeBlocksByEpoch(Manifest manifest, PlanConfig config, int epochs, World world, int node, int blockSize) {
        List<List<BlockRead>> out = new ArrayList<>();
        for (int e = 1; e <= epochs; e++) {
            out.add(nodeBlocks(manifest, config, e, world, node, blockSize));
        }
        return out;
    }

    /** The node's block accesses in one epoch (1-based). */
    public static List<BlockRead> nodeBlocks(Manifest manifest, PlanConfig config, int epoch, World world, int node, int blockSize) {
        return EpochPlan.of(manifest, config.forWorld(world), epoch).nodeBlocks(world, node, blockSize, 0);
    }

    /** The whole future, for MIN. */
    public static List<BlockId> flatten(List<List<BlockRead>> byEpoch) {
        List<BlockId> all = new ArrayList<>();
        byEpoch.forEach(epoch -> epoch.forEach(r -> all.add(r.block())));
        return all;
    }

    /** Per epoch: block requests, hits and bytes the simulator predicts for {@code policy} at {@code capacity}. */
    public static List<SimResult> predict(Manifest manifest, List<List<BlockRead>> byEpoch, long capacity, String policy, int blockSize) {
        EvictionPolicy<BlockId> p = Policies.create(policy, flatten(byEpoch));
        CacheSimulator<BlockId> sim = new CacheSimulator<>(capacity, p);
        List<SimResult> perEpoch = new ArrayList<>();
        SimResult before = sim.result();
        Map<ObjectKey, Long> sizes = new HashMap<>();
        manifest.shards().forEach(s -> sizes.put(s.key(), s.size()));
        for (List<BlockRead> epoch : byEpoch) {
            for (BlockRead r : epoch) {
                long size = Math.min(blockSize, sizes.get(r.block().key()) - r.block().index() * blockSize);
                sim.access(r.block(), size, r.length());
            }
            SimResult after = sim.result();
            perEpoch.add(after.minus(before));
            before = after;
        }
        return perEpoch;
    }
}
