package dev.ferry.sim;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.policy.PlannedPolicy;
import dev.ferry.plan.BlockRead;
import dev.ferry.plan.Manifest;
import dev.ferry.store.ObjectKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.function.Predicate;

/**
 * What a daemon's local tier will fetch for one registered job, epoch by epoch: the node's planned block
 * reads replayed through the policy class the daemon runs ({@link PlannedPolicy}), planned as the daemon
 * plans it (at each epoch's start: that epoch's blocks, then the next epoch's) with its clock at the reader's
 * position, over a cache with the local tier's watermarks ({@link SimCache}). A block the policy refuses is
 * fetched for the bytes read only, as the tier streams it through; one it admits is fetched whole.
 * Pure and single-threaded.
 */
public final class DaemonReplay {
    private DaemonReplay() {
    }

    /** Bytes fetched from upstream in each epoch of {@code byEpoch} with a tier of {@code capacity} bytes. */
    public static long[] egressByEpoch(Manifest manifest, List<List<BlockRead>> byEpoch, long capacity, int blockSize) {
        return egressByEpoch(manifest, byEpoch.size(), e -> byEpoch.get(e - 1), capacity, blockSize);
    }

    /**
     * As {@link #egressByEpoch(Manifest, List, long, int)} for {@code epochs} epochs whose block reads
     * {@code epochBlocks} gives (epochs count from 1), asked for each once, in order, when the replay needs it:
     * at most two epochs are held at a time.
     */
    public static long[] egressByEpoch(Manifest manifest, int epochs, IntFunction<List<BlockRead>> epochBlocks, long capacity,
            int blockSize) {
        return egressByEpoch(manifest, epochs, epochBlocks, capacity, blockSize, block -> false);
    }

    /**
     * As {@link #egressByEpoch(Manifest, int, IntFunction, long, int)} from a tier that already holds the blocks
     * {@code residentAtStart} accepts (what the node's tier holds when the job registers: a dataset indexed or read
     * through the daemon before): those of the first epoch are in the replay's tier before it starts, as far as the
     * policy keeps them, and cost no egress.
     */
    public static long[] egressByEpoch(Manifest manifest, int epochs, IntFunction<List<BlockRead>> epochBlocks, long capacity,
            int blockSize, Predicate<BlockId> residentAtStart) {
        Map<ObjectKey, Long> sizes = new HashMap<>();
        manifest.shards().forEach(s -> sizes.put(s.key(), s.size()));
        PlannedPolicy<BlockId> policy = new PlannedPolicy<>();
        SimCache<BlockId> cache = new SimCache<>(policy, capacity);
        long[] out = new long[epochs];
        List<BlockRead> following = epochs > 0 ? epochBlocks.apply(1) : List.of();
        for (int e = 0; e < epochs; e++) {
            List<BlockRead> epoch = following;
            following = e + 1 < epochs ? epochBlocks.apply(e + 2) : null;
            List<BlockId> planned = new ArrayList<>(epoch.size() * 2);
            epoch.forEach(r -> planned.add(r.block()));
            if (following != null) {
                following.forEach(r -> planned.add(r.block()));
            }
            policy.plan(planned);
            if (e == 0) {
                policy.advanceTo(0);
                for (BlockRead r : epoch) {
                    if (residentAtStart.test(r.block()) && !cache.contains(r.block())) {
                        cache.access(r.block(), Math.min(blockSize, sizes.get(r.block().key()) - r.block().index() * blockSize));
                    }
                }
            }
            for (int i = 0; i < epoch.size(); i++) {
                policy.advanceTo(i);
                BlockRead r = epoch.get(i);
                long blockLength = Math.min(blockSize, sizes.get(r.block().key()) - r.block().index() * blockSize);
                if (cache.access(r.block(), blockLength)) {
                    continue;
                }
                out[e] += cache.contains(r.block()) ? blockLength : r.length();
            }
        }
        return out;
    }
}
