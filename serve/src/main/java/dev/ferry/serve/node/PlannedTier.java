package dev.ferry.serve.node;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.policy.PlannedPolicy;
import dev.ferry.plan.Prefetcher;
import dev.ferry.time.Clock;
import java.util.List;

/**
 * The local tier as the plans drive it. Eviction is a {@link PlannedPolicy} that follows every plan's future, each at
 * its own position and pace ({@link PlannedPolicy#plan(String, List, long)}); under {@code eviction-follows:
 * last-report}, only the future of the plan reported last. Prefetchers fetch over the local tier, at most
 * {@code prefetch-bytes} ahead and eight blocks at a time. Thread-safe.
 */
final class PlannedTier implements PlanSink {
    private static final int PREFETCH_SLOTS = 8;

    private final PlannedPolicy<BlockId> policy;
    private final CachingStore cache;
    private final boolean lastReportOnly;
    /** {@code prefetch-bytes} in blocks (0: prefetch is off). */
    private final long aheadBlocks;
    private final Clock clock;
    /** Under last-report: the plan whose future eviction follows (guarded by the policy). */
    private String lastReported;

    /** {@code policy}: the local tier's ({@code cache}'s) eviction policy; {@code clock} times each plan's pace. */
    PlannedTier(PlannedPolicy<BlockId> policy, CachingStore cache, NodeConfig config, Clock clock) {
        this.policy = policy;
        this.cache = cache;
        this.lastReportOnly = config.evictionFollows().equals(NodeConfig.LAST_REPORT);
        this.aheadBlocks = config.prefetchBytes() / config.blockSize();
        this.clock = clock;
    }

    @Override
    public void follow(String plan, List<BlockId> future, long position, boolean replan) {
        long now = clock.nanoTime();
        synchronized (policy) {
            if (lastReportOnly) {
                if (replan || !plan.equals(lastReported)) {
                    policy.plan(future);
                    lastReported = plan;
                }
                policy.advanceTo(position);
                return;
            }
            if (replan || !policy.jobs().contains(plan)) {
                policy.plan(plan, future, now);
            }
            policy.advanceTo(plan, position, now);
        }
    }

    @Override
    public long nanosPerBlock(String plan) {
        return policy.nanosPerBlock(plan);
    }

    @Override
    public Prefetcher prefetcher(String name, List<BlockId> blocks) {
        if (aheadBlocks < 1) {
            return null;
        }
        Prefetcher.Settings settings = Prefetcher.Settings.DEFAULT.withSlots(PREFETCH_SLOTS)
                .withMaxAheadBlocks((int) Math.min(Integer.MAX_VALUE, aheadBlocks));
        return new Prefetcher(name, blocks, Prefetcher.Target.over(cache), settings, clock).start();
    }

    @Override
    public int prefetchSlots() {
        return PREFETCH_SLOTS;
    }
}
