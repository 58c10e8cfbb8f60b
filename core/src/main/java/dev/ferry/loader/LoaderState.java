package dev.ferry.loader;

/**
 * Where a loader stands, for checkpoints: the epoch, how many samples of it all ranks together have
 * consumed (the plan's resume position), the seed, and the canonical node count the plan was defined over
 * (1 for the global partition; 0 when unknown, for checkpoints written before partitions existed, read as
 * the loader's own). Resuming with a different world size is exact.
 */
public record LoaderState(int epoch, long consumed, long seed, int canonicalNodes) {
    public LoaderState {
        if (epoch < 1 || consumed < 0 || canonicalNodes < 0) {
            throw new IllegalArgumentException("need epoch >= 1, consumed >= 0 and canonicalNodes >= 0: " + epoch + ", " + consumed + ", "
                    + canonicalNodes);
        }
    }

    public LoaderState(int epoch, long consumed, long seed) {
        this(epoch, consumed, seed, 0);
    }
}
