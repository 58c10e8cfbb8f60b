package dev.ferry.cache;

import dev.ferry.store.ObjectKey;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Tells sequential readers of an object from the rest, block by block, and says which blocks to read ahead.
 * Pure bookkeeping (no I/O, no threads), fed the blocks each read asks for, in order.
 *
 * <p>Per object version it keeps the furthest block read ({@code frontier}) and a streak: a read that moves
 * the frontier and starts within {@code window} blocks of it extends the streak (concurrent ranged readers
 * such as awscli's ten part downloads arrive a little out of order); one that starts further away starts a
 * new streak there; a read behind the frontier (a re-read, a header) changes nothing. Once the streak
 * reaches {@code minStreak} reads, the next {@code blocksAhead} blocks past the frontier are due, each
 * handed out once. At most {@code capacity} objects are tracked, least recently read forgotten first.
 *
 * <p>Two reader patterns are told apart from random reads:
 * <ul>
 *   <li><b>Footer first.</b> Zip (and so npz), Parquet and HDF5 readers read an index at the end of the file, then
 *       the file from its start. A read of the last block that does not continue the streak leaves the frontier
 *       and the streak as they were, so the reader that then starts at block 0 is as sequential as one that never
 *       looked at the end (before, the frontier jumped to the end and every later read counted as a re-read).
 *   <li><b>Whole small objects.</b> An object of at most {@code wholeBlocks} blocks (0: none) is due whole at its
 *       first read, wherever it starts, less the blocks that read asks for at either end: a reader of a small file
 *       almost always reads all of it, and the blocks then arrive in parallel instead of one run after another.
 * </ul>
 *
 * <p>Thread-safe (one lock, held for a map lookup).
 */
final class SequentialDetector {
    private record Version(ObjectKey key, String etag) {
    }

    private static final class State {
        long frontier = -1;
        int streak;
        long scheduledUpTo = -1;
        boolean seen;
    }

    /** Blocks {@code from} to {@code to} (inclusive) are to be read ahead. */
    record Ahead(long from, long to) {
    }

    private final int minStreak;
    private final int window;
    private final int blocksAhead;
    private final int wholeBlocks;
    private final Map<Version, State> states;

    SequentialDetector(int minStreak, int window, int blocksAhead, int capacity) {
        this(minStreak, window, blocksAhead, capacity, 0);
    }

    SequentialDetector(int minStreak, int window, int blocksAhead, int capacity, int wholeBlocks) {
        if (minStreak < 1 || window < 0 || blocksAhead < 1 || capacity < 1) {
            throw new IllegalArgumentException("need minStreak >= 1, window >= 0, blocksAhead >= 1, capacity >= 1: "
                    + minStreak + ", " + window + ", " + blocksAhead + ", " + capacity);
        }
        this.minStreak = minStreak;
        this.window = window;
        this.blocksAhead = blocksAhead;
        this.wholeBlocks = Math.max(0, wholeBlocks);
        this.states = new LinkedHashMap<>(64, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Version, State> eldest) {
                return size() > capacity;
            }
        };
    }

    /**
     * A read of blocks {@code first} to {@code last} of an object version whose last block is {@code lastBlock}:
     * the blocks now due for read-ahead (marked handed out), or null.
     */
    synchronized Ahead observe(ObjectKey key, String etag, long first, long last, long lastBlock) {
        State s = states.computeIfAbsent(new Version(key, etag), v -> new State());
        Ahead whole = null;
        if (!s.seen) {
            s.seen = true;
            if (lastBlock < wholeBlocks) {
                s.scheduledUpTo = lastBlock;
                long from = first == 0 ? last + 1 : 0;
                long to = last == lastBlock ? first - 1 : lastBlock;
                whole = from <= to ? new Ahead(from, to) : null;
            }
        }
        if (last <= s.frontier) {
            return whole; // behind the frontier: a re-read
        }
        boolean near = s.frontier < 0 ? first == 0 : first >= s.frontier + 1 - window && first <= s.frontier + 1 + window;
        if (!near && last == lastBlock && first > 0) {
            return whole; // a footer (zip, Parquet, HDF5 index) read before the body: not where the reader goes next
        }
        s.streak = near ? s.streak + 1 : 1;
        s.frontier = last;
        if (!near) {
            s.scheduledUpTo = Math.max(s.scheduledUpTo, last);
        }
        if (s.streak < minStreak) {
            return whole;
        }
        long from = Math.max(s.frontier, s.scheduledUpTo) + 1;
        long to = Math.min(lastBlock, s.frontier + blocksAhead);
        if (from > to) {
            return whole;
        }
        s.scheduledUpTo = to;
        return new Ahead(from, to);
    }

    /** Blocks from {@code from} on were not fetched after all (no budget): they may be handed out again. */
    synchronized void giveBack(ObjectKey key, String etag, long from) {
        State s = states.get(new Version(key, etag));
        if (s != null && s.scheduledUpTo >= from) {
            s.scheduledUpTo = from - 1;
        }
    }

    synchronized int tracked() {
        return states.size();
    }
}
