package dev.ferry.cache.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Belady's MIN for a long-running cache whose future arrives at run time: a daemon serving many jobs over
 * hours, told a job's plan when it registers and the job's position as it reports progress.
 *
 * <p>Unlike {@link MinPolicy}, whose clock is the count of accesses it has seen, this policy's clock is the
 * consumer's reported position in the planned sequence ({@link #advanceTo}). Accesses therefore do not move
 * it: a prefetcher may read ahead, and clients may read in a slightly different order, without the
 * policy's idea of "now" drifting from the consumer's.
 *
 * <p>Order: the entry whose next planned use (at or after the position) is farthest goes first; entries
 * with no planned use go before any planned one, least recently used first. Without a plan it is LRU.
 * Admission when room must be made: a planned entry is admitted when it is needed sooner than the farthest
 * resident; an unplanned one only when the farthest resident is unplanned too (so unplanned reads never
 * push out planned blocks).
 *
 * <p>Thread-safe (every method synchronizes on the policy): the cache calls it under its own lock, and the
 * daemon calls {@link #plan} and {@link #advanceTo} from request threads.
 */
public final class PlannedPolicy<K> implements EvictionPolicy<K> {
    private static final long NEVER = Long.MAX_VALUE;

    private record Resident<K>(long nextUse, long seq, K key) implements Comparable<Resident<K>> {
        /** Nearest use first; among equal uses the most recently touched first, so the last is the victim. */
        @Override
        public int compareTo(Resident<K> o) {
            int c = Long.compare(nextUse, o.nextUse);
            return c != 0 ? c : Long.compare(o.seq, seq);
        }
    }

    private List<K> accesses = List.of();
    private Map<K, long[]> positions = Map.of();
    private long position;
    private long sequence;
    private final Map<K, Resident<K>> residents = new HashMap<>();
    private final TreeSet<Resident<K>> order = new TreeSet<>();

    @Override
    public String name() {
        return "planned";
    }

    /** Replaces the future with {@code planned} (the accesses to come, in order); the position goes to 0. */
    public synchronized void plan(List<K> planned) {
        Map<K, List<Long>> at = new HashMap<>();
        for (int i = 0; i < planned.size(); i++) {
            at.computeIfAbsent(planned.get(i), k -> new ArrayList<>()).add((long) i);
        }
        Map<K, long[]> next = new HashMap<>(at.size() * 2);
        at.forEach((k, list) -> next.put(k, list.stream().mapToLong(Long::longValue).toArray()));
        accesses = List.copyOf(planned);
        positions = next;
        position = 0;
        for (K key : List.copyOf(residents.keySet())) {
            touch(key, false);
        }
    }

    /** The planned sequence's length. */
    public synchronized int planned() {
        return accesses.size();
    }

    /** The consumer has made the accesses before {@code newPosition}; moving backwards is ignored. */
    public synchronized void advanceTo(long newPosition) {
        long to = Math.min(newPosition, accesses.size());
        for (long i = position; i < to; i++) {
            K key = accesses.get((int) i);
            if (residents.containsKey(key)) {
                position = i + 1;
                touch(key, false);
            }
        }
        position = Math.max(position, to);
    }

    public synchronized long position() {
        return position;
    }

    private long nextUse(K key) {
        long[] at = positions.get(key);
        if (at == null) {
            return NEVER;
        }
        int i = Arrays.binarySearch(at, position);
        if (i < 0) {
            i = -i - 1;
        }
        return i < at.length ? at[i] : NEVER;
    }

    /** Re-ranks a resident entry; {@code used} marks it most recently used. */
    private void touch(K key, boolean used) {
        Resident<K> old = residents.get(key);
        if (old == null) {
            return;
        }
        order.remove(old);
        Resident<K> r = new Resident<>(nextUse(key), used ? sequence++ : old.seq(), key);
        residents.put(key, r);
        order.add(r);
    }

    @Override
    public synchronized void onHit(K key) {
        touch(key, true);
    }

    @Override
    public synchronized boolean admit(K key, long weight, boolean mustEvict) {
        if (!mustEvict || order.isEmpty()) {
            return true;
        }
        long next = nextUse(key);
        long farthest = order.last().nextUse();
        return next == NEVER ? farthest == NEVER : next < farthest;
    }

    @Override
    public synchronized void onAdd(K key, long weight) {
        Resident<K> r = new Resident<>(nextUse(key), sequence++, key);
        Resident<K> old = residents.put(key, r);
        if (old != null) {
            order.remove(old);
        }
        order.add(r);
    }

    @Override
    public synchronized void onRemove(K key) {
        Resident<K> r = residents.remove(key);
        if (r != null) {
            order.remove(r);
        }
    }

    @Override
    public synchronized K victim(Predicate<K> evictable) {
        for (Iterator<Resident<K>> it = order.descendingIterator(); it.hasNext(); ) {
            Resident<K> r = it.next();
            if (evictable.test(r.key())) {
                return r.key();
            }
        }
        return null;
    }
}
