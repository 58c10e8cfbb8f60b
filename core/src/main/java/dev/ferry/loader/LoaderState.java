package dev.ferry.loader;

/**
 * Where a loader stands, for checkpoints: the epoch, how many samples of it all ranks together have
 * consumed (the plan's resume position), and the seed. Resuming with a different world size is exact.
 */
public record LoaderState(int epoch, long consumed, long seed) {
    public LoaderState {
        if (epoch < 1 || consumed < 0) {
            throw new IllegalArgumentException("need epoch >= 1 and consumed >= 0: " + epoch + ", " + consumed);
        }
    }
}
