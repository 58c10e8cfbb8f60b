package dev.ferry.loader;

import dev.ferry.plan.CanonicalHomes;

/**
 * Where a loader stands, for checkpoints: the epoch, how many samples of it all ranks together have
 * consumed (the plan's resume position), the seed, the canonical node count the plan was defined over
 * (1 for the global partition; 0 when unknown, for checkpoints written before partitions existed, read as
 * the loader's own), and the world of the round in progress: which node each canonical node lived on
 * ({@link CanonicalHomes}; null when the checkpoint does not say, read as {@code c mod nodes} on the resuming world),
 * and whose order the round in progress follows ({@code roundHomes}: the world that began it; null: {@code homes}).
 * Resuming with a different world size is exact; with the homes recorded, it also moves only the canonical
 * nodes that must move (a departed node's, or a quarter of them to a fourth node).
 */
public record LoaderState(int epoch, long consumed, long seed, int canonicalNodes, CanonicalHomes homes, CanonicalHomes roundHomes) {
    public LoaderState {
        if (epoch < 1 || consumed < 0 || canonicalNodes < 0) {
            throw new IllegalArgumentException("need epoch >= 1, consumed >= 0 and canonicalNodes >= 0: " + epoch + ", " + consumed + ", "
                    + canonicalNodes);
        }
        if (homes != null && canonicalNodes != 0 && homes.canonical() != canonicalNodes) {
            throw new IllegalArgumentException("homes of " + homes.canonical() + " canonical nodes for a plan over " + canonicalNodes);
        }
        if (roundHomes != null && (homes == null || roundHomes.canonical() != homes.canonical())) {
            throw new IllegalArgumentException("the round's homes need the world's homes, over as many canonical nodes");
        }
    }

    public LoaderState(int epoch, long consumed, long seed, int canonicalNodes, CanonicalHomes homes) {
        this(epoch, consumed, seed, canonicalNodes, homes, null);
    }

    public LoaderState(int epoch, long consumed, long seed, int canonicalNodes) {
        this(epoch, consumed, seed, canonicalNodes, null, null);
    }

    public LoaderState(int epoch, long consumed, long seed) {
        this(epoch, consumed, seed, 0, null, null);
    }
}
