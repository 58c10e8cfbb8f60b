package dev.ferry.loader;

import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.CanonicalHomes;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Placement;
import dev.ferry.plan.Prefetcher;
import dev.ferry.plan.World;
import dev.ferry.store.ObjectStore;
import dev.ferry.time.Clock;
import java.util.Objects;

/**
 * Iterates one rank's samples in plan order, epoch by epoch: {@link #epoch(int)} starts an epoch,
 * {@link #resume(LoaderState)} picks one up from a checkpoint (with this loader's world, which may differ
 * from the one that wrote the checkpoint). Reads go through any {@link ObjectStore}: the bare origin, or the
 * local tier in front of it. Thread-safe; each {@link EpochRun} is used by one consumer.
 */
public final class Loader<T> {
    private final ObjectStore store;
    private final Manifest manifest;
    private final PlanConfig plan;
    private final World world;
    private final int rank;
    private final LoaderConfig config;
    private final Decoder<T> decoder;
    private final ReadAheadBudget budget;
    private final Clock clock;
    /** What the last epoch's prefetcher measured (pace, fetch time), for the next one to start from. */
    private volatile Prefetcher.Stats lastPrefetch;
    /** Where the canonical nodes live on this loader's world since the last resume (null: {@code c mod nodes}); later epochs keep them. */
    private volatile CanonicalHomes homes;

    public Loader(ObjectStore store, Manifest manifest, PlanConfig plan, World world, int rank, LoaderConfig config, Decoder<T> decoder) {
        this(store, manifest, plan, world, rank, config, decoder, null);
    }

    /**
     * A loader whose read-ahead draws on {@code budget}, shared by every loader of the process (null: bounded
     * by {@code aheadSamples} only).
     */
    public Loader(ObjectStore store, Manifest manifest, PlanConfig plan, World world, int rank, LoaderConfig config, Decoder<T> decoder,
            ReadAheadBudget budget) {
        this(store, manifest, plan, world, rank, config, decoder, budget, Clock.system());
    }

    /** The same, timing the consumer's waits and pacing the prefetch on {@code clock}. */
    public Loader(ObjectStore store, Manifest manifest, PlanConfig plan, World world, int rank, LoaderConfig config, Decoder<T> decoder,
            ReadAheadBudget budget, Clock clock) {
        this.budget = budget;
        this.clock = Objects.requireNonNull(clock, "clock is null");
        this.store = Objects.requireNonNull(store, "store is null");
        this.manifest = Objects.requireNonNull(manifest, "manifest is null");
        this.world = Objects.requireNonNull(world, "world is null");
        this.plan = Objects.requireNonNull(plan, "plan is null");
        this.config = Objects.requireNonNull(config, "config is null");
        this.decoder = Objects.requireNonNull(decoder, "decoder is null");
        if (rank < 0 || rank >= world.ranks()) {
            throw new IllegalArgumentException("rank must be 0 to " + (world.ranks() - 1) + ": " + rank);
        }
        this.rank = rank;
    }

    /**
     * A loader for this process's rank in its job, the world and the rank read from the launcher's environment
     * (torchrun's, Kubeflow's: {@link Placement#fromEnvironment()}), as the Python client's {@code register_job} reads them.
     *
     * @throws IllegalArgumentException when the environment does not say this process's rank, or contradicts itself
     */
    public static <T> Loader<T> fromEnvironment(ObjectStore store, Manifest manifest, PlanConfig plan, LoaderConfig config, Decoder<T> decoder) {
        return forPlacement(store, manifest, plan, Placement.fromEnvironment(), config, decoder);
    }

    /** A loader for {@code placement}'s rank, which must be known. */
    public static <T> Loader<T> forPlacement(ObjectStore store, Manifest manifest, PlanConfig plan, Placement placement, LoaderConfig config,
            Decoder<T> decoder) {
        if (placement.rank() < 0) {
            throw new IllegalArgumentException("the launcher's variables (" + placement.source() + ") say node " + placement.node() + " of "
                    + placement.world().nodes() + " but not this process's rank: set LOCAL_RANK or RANK, or start it with torchrun");
        }
        return new Loader<>(store, manifest, plan, placement.world(), placement.rank(), config, decoder);
    }

    /** Starts an epoch (1-based) from its beginning, with the plan made definite for this loader's world. */
    public EpochRun<T> epoch(int epoch) {
        CanonicalHomes h = homes;
        return resume(new LoaderState(epoch, 0, plan.seed(), h != null ? h.canonical() : plan.forWorld(world).canonical(), h));
    }

    /**
     * The plan an epoch from {@code state} follows: the checkpoint's canonical node count when this loader
     * leaves it open (partition auto, or node without a count), so a job resumed on another world keeps its
     * order; a conflicting count is refused.
     */
    PlanConfig planFor(LoaderState state) {
        PlanConfig mine = plan.forWorld(world);
        if (state.canonicalNodes() == 0 || state.canonicalNodes() == mine.canonical()) {
            return mine;
        }
        boolean open = plan.partition() == PlanConfig.Partition.AUTO || (plan.partition() == PlanConfig.Partition.NODE && plan.canonicalNodes() == 0);
        if (!open) {
            throw new IllegalArgumentException("checkpoint was taken with a plan over " + state.canonicalNodes()
                    + " canonical nodes, this loader plans over " + mine.canonical() + ": resume with the job's partition and canonical node count");
        }
        return state.canonicalNodes() == 1 ? plan.withPartition(PlanConfig.Partition.GLOBAL)
                : plan.withPartition(PlanConfig.Partition.NODE).withCanonicalNodes(state.canonicalNodes());
    }

    /** Continues an epoch from a checkpoint taken with {@link EpochRun#state()}. */
    public EpochRun<T> resume(LoaderState state) {
        if (state.seed() != plan.seed()) {
            throw new IllegalArgumentException("checkpoint was taken with seed " + state.seed() + ", this loader plans with seed " + plan.seed());
        }
        EpochPlan epochPlan = EpochPlan.of(manifest, planFor(state), state.epoch());
        if (state.consumed() > epochPlan.size()) {
            throw new IllegalArgumentException("checkpoint position " + state.consumed() + " is past the end of epoch "
                    + state.epoch() + " (" + epochPlan.size() + " samples)");
        }
        CanonicalHomes h = homesFor(state, epochPlan.canonicalNodes());
        homes = h;
        CanonicalHomes round = state.homes() == null || state.homes().canonical() != h.canonical() ? h
                : state.roundHomes() != null ? state.roundHomes() : state.homes();
        return new EpochRun<>(store, epochPlan.deal(world, state.consumed(), h, round), epochPlan, plan.seed(), rank, config, decoder, budget,
                lastPrefetch, stats -> lastPrefetch = stats, clock);
    }

    /**
     * Where the canonical nodes live on this loader's world: the checkpoint's homes when they are for a world of
     * this size, else those resized to it (moving only what must move), else, when the checkpoint does not say,
     * {@code c mod nodes}.
     */
    CanonicalHomes homesFor(LoaderState state, int canonical) {
        CanonicalHomes recorded = state.homes();
        if (recorded == null || recorded.canonical() != canonical) {
            return CanonicalHomes.of(canonical, world.nodes());
        }
        return recorded.nodes() == world.nodes() ? recorded : recorded.resized(world.nodes());
    }
}
