package dev.ferry.cache.policy;

import java.util.function.Predicate;

/**
 * Decides what a capacity-bounded cache keeps. The cache owns the bytes and the capacity; the policy owns the
 * order. Every access is reported exactly once: {@link #onHit} for a resident entry, {@link #admit} for a
 * missing one.
 *
 * <p>Protocol for a miss: {@code admit(key, weight, mustEvict)}; when it says yes, the cache makes room by
 * removing {@link #victim} entries (reporting each with {@link #onRemove}), then reports the new entry with
 * {@link #onAdd}. Entries may also leave for other reasons (a stale version, a corrupt block): the cache
 * reports those with {@link #onRemove} too.
 *
 * <p>Implementations are not thread-safe: the cache serializes calls.
 *
 * @param <K> the entry key (a block id in the cache, a trace key in the simulator)
 */
public interface EvictionPolicy<K> {
    /** Short name used in reports: {@code lru}, {@code pin}, {@code sieve}, {@code min}. */
    String name();

    /** A resident entry was accessed. */
    void onHit(K key);

    /**
     * A missing entry was accessed; true when it should be cached. {@code mustEvict} says whether caching it
     * needs room made first, so a policy may refuse what it would evict first (bypass).
     */
    boolean admit(K key, long weight, boolean mustEvict);

    /**
     * A missing entry is being fetched ahead of its next access (a prefetch), which has not happened yet; true
     * when it should be cached. The access itself comes later, as {@link #onHit}. Policies that consume an
     * access on {@link #admit} (MIN walks its sequence) must not consume one here; the default is
     * {@link #admit}, right for every policy that does not.
     */
    default boolean admitAhead(K key, long weight, boolean mustEvict) {
        return admit(key, weight, mustEvict);
    }

    /**
     * When {@code key} is next used, in the policy's own order (smaller is sooner; {@code Long.MAX_VALUE}:
     * never), for entries the cache holds outside the policy; -1 when the policy does not know the future.
     */
    default long plannedUse(K key) {
        return -1;
    }

    /** Whether a {@link #plannedUse} names a use: the policy knows the future, and the key is read again in it. */
    static boolean isPlanned(long plannedUse) {
        return plannedUse >= 0 && plannedUse != Long.MAX_VALUE;
    }

    /** An entry became resident. */
    void onAdd(K key, long weight);

    /** An entry left the cache, for any reason. */
    void onRemove(K key);

    /** The resident entry to evict next among those {@code evictable} accepts, or null when there is none. */
    K victim(Predicate<K> evictable);
}
