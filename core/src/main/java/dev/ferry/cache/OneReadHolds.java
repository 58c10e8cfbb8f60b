package dev.ferry.cache;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * Prefetched blocks the policy would not keep, held for their reads outside the capacity and outside the policy, in
 * a room of their own: the reader finds such a block on disk, and nothing the policy keeps is evicted for it. A held
 * block whose reads are done leaves once the policy's next planned use of it is more than a tier's worth of reads
 * away (the room is for reads about to happen, not a second cache); when room is needed for the next one, held blocks
 * leave by planned use, farthest first (never one needed sooner than the newcomer), and, with a policy that knows no
 * future, those already read leave oldest first, and any not read after many later holds (a reader that never came).
 *
 * <p>Not thread-safe: {@link BlockIndex}'s lock guards it, and every call is made under it.
 */
final class OneReadHolds {
    private final long capacity;
    private final Function<BlockId, BlockEntry> entries;
    private final Predicate<BlockEntry> removable;
    private final ToLongFunction<BlockId> plannedUse;
    /** The blocks held, in the order they were held, with the sequence number of each hold. */
    private final LinkedHashMap<BlockId, Long> holds = new LinkedHashMap<>();
    private long used;
    private long sequence;

    /**
     * Holds at most {@code capacity} bytes of blocks; {@code entries} finds a block in the index, {@code removable}
     * says whether one may leave (ready, unpinned, no reader's superseded version), {@code plannedUse} is the policy's
     * next planned use ({@code Long.MAX_VALUE}: never; negative: the policy knows no future).
     */
    OneReadHolds(long capacity, Function<BlockId, BlockEntry> entries, Predicate<BlockEntry> removable, ToLongFunction<BlockId> plannedUse) {
        this.capacity = capacity;
        this.entries = entries;
        this.removable = removable;
        this.plannedUse = plannedUse;
    }

    int size() {
        return holds.size();
    }

    boolean fits(long length) {
        return used + length <= capacity;
    }

    void add(BlockId id, long length) {
        used += length;
        holds.put(id, sequence++);
    }

    void remove(BlockId id, long length) {
        used -= length;
        holds.remove(id);
    }

    /** Held blocks already read whose next planned use is after {@code soon}: they leave now. */
    List<BlockId> readAndNotSoon(long soon) {
        List<BlockId> done = new ArrayList<>();
        for (BlockId id : holds.keySet()) {
            BlockEntry r = entries.apply(id);
            if (r != null && r.read && removable.test(r) && plannedUse.applyAsLong(id) > soon) {
                done.add(id);
            }
        }
        return done;
    }

    /**
     * The held block to leave to make room for a block of {@code length} whose planned use is {@code mine} (negative:
     * the policy knows no future); null when none may.
     */
    BlockId victim(long length, long mine) {
        long patience = 4 * Math.max(1, capacity / Math.max(1, length));
        BlockEntry out = null;
        long outUse = -1;
        for (Map.Entry<BlockId, Long> held : holds.entrySet()) {
            BlockEntry r = entries.apply(held.getKey());
            if (r == null || !removable.test(r)) {
                continue;
            }
            // an unread block held through many later holds: its reader never came. A policy that knows the
            // future says when it comes (NEVER: not at all, taken below as the farthest), so it decides alone
            if (!r.read && mine < 0 && sequence - held.getValue() > patience) {
                return r.id;
            }
            long use = mine < 0 ? (r.read ? Long.MAX_VALUE - held.getValue() : -1) : plannedUse.applyAsLong(r.id);
            if (use > outUse && (mine < 0 ? r.read : use > mine)) {
                out = r;
                outUse = use;
            }
        }
        return out == null ? null : out.id;
    }
}
