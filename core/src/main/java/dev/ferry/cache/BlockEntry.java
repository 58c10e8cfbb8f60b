package dev.ferry.cache;

import java.nio.file.Path;

/**
 * One block in the local tier's index: its identity and file layout (final), and its state in the index.
 * A reservation is an entry that is not {@code ready} yet (its bytes are on the way; only {@code id},
 * {@code path} and {@code dataLength} mean anything); publishing a block replaces it with a ready entry.
 *
 * <p>Thread-safety: the final fields are safe to read anywhere; {@code ready}, {@code removed}, {@code pins},
 * {@code transit}, {@code read} and {@code lastReadNanos} are guarded by the {@link BlockIndex}'s lock; {@code verified}
 * and {@code witness} are volatile (set by whichever reader checked the block last; see {@link BlockCheck});
 * {@code arrivedNanos} is set before the entry is published and not changed after.
 */
final class BlockEntry {
    final BlockId id;
    final Path path;
    final long objectSize;
    final int dataLength;
    final int headerLength;
    final int crc;
    final boolean recoveredAfterCrash;
    boolean ready;
    boolean removed;
    volatile boolean verified;
    /**
     * What the last passed check saw of the file (see {@link BlockCheck}); before the first, what its run saw when
     * it wrote it ({@link BlockCheck#written}), or null.
     */
    volatile BlockCheck.Witness witness;
    int pins;
    /**
     * Held for its reads: prefetched although the policy would not keep it, outside the capacity and the
     * policy (see {@link BlockIndex}); {@code read}: a reader has used it.
     */
    boolean transit;
    boolean read;
    /**
     * When the block became resident, by the tier's clock ({@link TierLedger#BEFORE_START}: found on disk at start);
     * set before the entry is published.
     */
    long arrivedNanos = TierLedger.BEFORE_START;
    /** When a reader last used it (the tier's clock; {@link TierLedger#BEFORE_START}: not since this process began). */
    long lastReadNanos = TierLedger.BEFORE_START;

    BlockEntry(BlockId id, Path path, long objectSize, int dataLength, int headerLength, int crc, boolean recoveredAfterCrash) {
        this.id = id;
        this.path = path;
        this.objectSize = objectSize;
        this.dataLength = dataLength;
        this.headerLength = headerLength;
        this.crc = crc;
        this.recoveredAfterCrash = recoveredAfterCrash;
    }
}
