package dev.ferry.plan;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.policy.EvictionPolicy;
import dev.ferry.cache.policy.Policies;
import dev.ferry.sim.CacheSimulator;
import dev.ferry.sim.SimResult;
import java.util.ArrayList;
import java.util.List;

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
    public static List<List<BlockId>> nodeBlocksByEpoch(Manifest manifest, PlanConfig config, int epochs, World world, int node, int blockSize) {
        List<List<BlockId>> out = new ArrayList<>();
        for (int e = 1; e <= epochs; e++) {
            out.add(EpochPlan.of(manifest, config, e).nodeBlocks(world, node, blockSize, 0));
        }
        return out;
    }

    /** The whole future, for MIN. */
    public static List<BlockId> flatten(List<List<BlockId>> byEpoch) {
        List<BlockId> all = new ArrayList<>();
        byEpoch.forEach(all::addAll);
        return all;
    }

    /** Per epoch: block requests, hits and bytes the simulator predicts for {@code policy} at {@code capacity}. */
    public static List<SimResult> predict(Manifest manifest, List<List<BlockId>> byEpoch, long capacity, String policy, int blockSize) {
        EvictionPolicy<BlockId> p = Policies.create(policy, flatten(byEpoch));
        CacheSimulator<BlockId> sim = new CacheSimulator<>(capacity, p);
        List<SimResult> perEpoch = new ArrayList<>();
        SimResult before = sim.result();
        for (List<BlockId> epoch : byEpoch) {
            for (BlockId b : epoch) {
                sim.access(b, blockLength(manifest, b, blockSize));
            }
            SimResult after = sim.result();
            perEpoch.add(new SimResult(after.policy(), after.requests() - before.requests(), after.hits() - before.hits(),
                    after.bytes() - before.bytes(), after.hitBytes() - before.hitBytes()));
            before = after;
        }
        return perEpoch;
    }

    /** The length of a block of a shard: the block size, or less for the shard's last block. */
    public static long blockLength(Manifest manifest, BlockId block, int blockSize) {
        for (Shard s : manifest.shards()) {
            if (s.key().equals(block.key())) {
                return Math.min(blockSize, s.size() - block.index() * blockSize);
            }
        }
        throw new IllegalArgumentException(block.key() + " is not in the manifest");
    }
}
