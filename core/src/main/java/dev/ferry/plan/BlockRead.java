package dev.ferry.plan;

import dev.ferry.cache.BlockId;
import java.util.Objects;

/** One planned read of a block: the block, and how many of its bytes the read wants. */
public record BlockRead(BlockId block, long length) {
    public BlockRead {
        Objects.requireNonNull(block, "block is null");
        if (length < 1) {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
    }
}
