package dev.ferry.plan;

/**
 * How plans shuffle and split. Keys and defaults:
 * <ul>
 *   <li>{@code seed} (0): with the epoch, fixes every order; the same seed gives the same plan anywhere.
 *   <li>{@code shuffleBlockShards} (4): shards are shuffled, then samples are shuffled within blocks of this
 *       many consecutive shards (MosaicML Streaming's py1br idea): a reader has about this many shards open
 *       at a time, yet samples of neighbouring shards mix.
 *   <li>{@code uneven} (PAD): when the samples do not divide evenly among ranks, PAD repeats samples from the
 *       start of the epoch's order so every rank gets the same count; DROP leaves the last few out. Either way
 *       every rank steps the same number of times, so no rank waits forever for another.
 * </ul>
 */
public record PlanConfig(long seed, int shuffleBlockShards, Uneven uneven) {
    public enum Uneven { PAD, DROP }

    public static final PlanConfig DEFAULT = new PlanConfig(0, 4, Uneven.PAD);

    public PlanConfig {
        if (shuffleBlockShards < 1) {
            throw new IllegalArgumentException("shuffleBlockShards must be at least 1: " + shuffleBlockShards);
        }
        if (uneven == null) {
            throw new IllegalArgumentException("uneven is null");
        }
    }

    public PlanConfig withSeed(long newSeed) {
        return new PlanConfig(newSeed, shuffleBlockShards, uneven);
    }

    public PlanConfig withUneven(Uneven mode) {
        return new PlanConfig(seed, shuffleBlockShards, mode);
    }

    public PlanConfig withShuffleBlockShards(int shards) {
        return new PlanConfig(seed, shards, uneven);
    }
}
