package dev.ferry.serve.node;

import dev.ferry.cache.BlockId;
import dev.ferry.plan.Prefetcher;
import java.util.List;

/**
 * The node's side of its readers' plans: eviction follows every plan's blocks to come, each plan at its own position
 * and pace, and a prefetcher fetches a plan's blocks into the local tier by the time they are needed. Plans are known
 * by name. Whoever plans the reads calls it (in the daemon, {@code serve.jobs}); the node's one question back is
 * {@link BlockHolders}. Thread-safe.
 */
public interface PlanSink {
    /**
     * Eviction follows {@code plan}: {@code future} is its blocks to come ({@code replan}: a new future, as when an
     * epoch starts; otherwise the one given before stands), {@code position} its place in them now.
     */
    void follow(String plan, List<BlockId> future, long position, boolean replan);

    /** The measured time per block of {@code plan} (0 while unmeasured, or when eviction follows the last report only). */
    long nanosPerBlock(String plan);

    /**
     * A started prefetcher of {@code blocks} into the local tier, by time to need, at most {@code prefetch-bytes} ahead
     * of the position it is given; null when prefetch is off ({@code prefetch-bytes} under a block).
     */
    Prefetcher prefetcher(String name, List<BlockId> blocks);

    /** How many blocks a prefetcher fetches at a time. */
    int prefetchSlots();
}
