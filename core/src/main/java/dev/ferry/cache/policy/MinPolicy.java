package dev.ferry.cache.policy;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Belady's MIN, made practical by a known future: evicts the resident entry whose next use is farthest away,
 * and refuses to admit an entry whose next use is farther than every resident entry's (it would be the first
 * victim). Optimal for unit sizes (Belady, 1966); with byte weights, a strong heuristic.
 *
 * <p>The future is the sequence of accesses the plan (or a trace) says will happen. Each reported access
 * consumes that key's next planned occurrence; accesses the plan did not foresee are served and their keys
 * treated as never used again. Built in O(n) over the sequence; each event costs O(log residents).
 */
public final class MinPolicy<K> implements EvictionPolicy<K> {
    private static final long NEVER = Long.MAX_VALUE;

    /** For each key, the positions in the sequence where it is accessed, in order. */
    private final Map<K, ArrayDeque<Long>> future = new HashMap<>();
    /** Next use of entries admitted but not yet added. */
    private final Map<K, Long> nextUse = new HashMap<>();
    /** Residents ordered by next use, farthest last; ties by insertion sequence. */
    private final TreeSet<Resident<K>> byNextUse = new TreeSet<>();
    private long sequence;

    private record Resident<K>(long nextUse, long seq, K key) implements Comparable<Resident<K>> {
        @Override
        public int compareTo(Resident<K> o) {
            int c = Long.compare(nextUse, o.nextUse);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private final Map<K, Resident<K>> residents = new HashMap<>();

    public MinPolicy(List<K> accesses) {
        long position = 0;
        for (K key : accesses) {
            future.computeIfAbsent(key, k -> new ArrayDeque<>()).add(position++);
        }
    }

    @Override
    public String name() {
        return "min";
    }

    /** Consumes the key's current access and returns the position of its next one (or NEVER). */
    private long advance(K key) {
        ArrayDeque<Long> q = future.get(key);
        if (q == null) {
            return NEVER;
        }
        q.poll();
        Long next = q.peek();
        if (next == null) {
            future.remove(key);
            return NEVER;
        }
        return next;
    }

    @Override
    public void onHit(K key) {
        long next = advance(key);
        Resident<K> r = residents.get(key);
        if (r != null) {
            byNextUse.remove(r);
            Resident<K> updated = new Resident<>(next, sequence++, key);
            residents.put(key, updated);
            byNextUse.add(updated);
        }
    }

    @Override
    public boolean admit(K key, long weight, boolean mustEvict) {
        return admitFor(key, advance(key), mustEvict);
    }

    /**
     * A prefetch, ahead of the access it is fetched for (its hit consumes it). With free room it is kept for
     * that access. When room must be made it is decided as the miss would be at that access: kept only when
     * its use after that one comes before the farthest resident's, so a prefetch never evicts a block that
     * demand MIN would have kept (the egress MIN predicts stays what a prefetching cache spends).
     */
    @Override
    public boolean admitAhead(K key, long weight, boolean mustEvict) {
        ArrayDeque<Long> q = future.get(key);
        Long upcoming = q == null ? null : q.peek();
        if (upcoming == null) {
            return admitFor(key, NEVER, mustEvict);
        }
        if (!mustEvict) {
            return admitFor(key, upcoming, false);
        }
        Long after = q.size() > 1 ? q.stream().skip(1).findFirst().orElse(null) : null;
        Resident<K> farthest = byNextUse.isEmpty() ? null : byNextUse.last();
        boolean keep = after != null && farthest != null && after < farthest.nextUse();
        if (keep) {
            nextUse.put(key, upcoming);
        }
        return keep;
    }

    private boolean admitFor(K key, long next, boolean mustEvict) {
        boolean admit;
        if (!mustEvict) {
            admit = true; // free room: keeping it costs nothing, and it goes first if room is needed
        } else {
            Resident<K> farthest = byNextUse.isEmpty() ? null : byNextUse.last();
            admit = next != NEVER && farthest != null && next < farthest.nextUse();
        }
        if (admit) {
            nextUse.put(key, next);
        }
        return admit;
    }

    @Override
    public void onAdd(K key, long weight) {
        Long next = nextUse.remove(key);
        Resident<K> r = new Resident<>(next == null ? NEVER : next, sequence++, key);
        Resident<K> old = residents.put(key, r);
        if (old != null) {
            byNextUse.remove(old);
        }
        byNextUse.add(r);
    }

    @Override
    public void onRemove(K key) {
        nextUse.remove(key);
        Resident<K> r = residents.remove(key);
        if (r != null) {
            byNextUse.remove(r);
        }
    }

    @Override
    public K victim(Predicate<K> evictable) {
        for (Iterator<Resident<K>> it = byNextUse.descendingIterator(); it.hasNext(); ) {
            Resident<K> r = it.next();
            if (evictable.test(r.key())) {
                return r.key();
            }
        }
        return null;
    }
}
