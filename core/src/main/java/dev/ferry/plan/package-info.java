/**
 * Datasets and epoch plans: the {@link dev.ferry.plan.Manifest} a run pins (objects, sizes, ETags, sample
 * counts) and the {@link dev.ferry.plan.EpochPlan}, a pure function of (manifest, seed, epoch, world) that
 * says which sample every rank and worker reads at every step, and so which blocks each node will need and
 * when: what prefetch and plan-aware eviction read. Depends on {@code store} (keys), {@code cache} (block ids),
 * Jackson (manifest files) and the JDK; never on {@code sim}, which replays these plans ({@code sim.EgressPrediction}).
 */
package dev.ferry.plan;
