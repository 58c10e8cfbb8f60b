package dev.ferry.serve.node;

import dev.ferry.cache.BlockId;

/**
 * Who read a block last epoch, and so may still hold it on disk: the group member the hints ask for it first. The
 * node asks; the layer that knows every node's plan answers (in the daemon, {@code serve.jobs}' registry, handed to
 * {@link RegionalGroup#hintsFrom}). Thread-safe.
 */
@FunctionalInterface
public interface BlockHolders {
    /** Nobody: no plan says (the hints stay quiet, and every read takes the group's own route). */
    BlockHolders NONE = block -> null;

    /** The URL of the group member that read {@code block} last epoch, or null. */
    String holderOf(BlockId block);
}
