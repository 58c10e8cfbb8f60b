package dev.ferry.cache.policy;

import java.util.function.Predicate;

/**
 * A policy that puts some entries second: those {@code preferred} rejects are kept only in free room (never
 * at the cost of an eviction) and are the first to go. In a regional group, a node prefers the blocks it
 * owns (the group reads them from it) over copies of blocks another member owns and serves; otherwise the
 * inner policy decides. Not thread-safe beyond what the inner policy is; the cache serializes calls.
 */
public final class PreferringPolicy<K> implements EvictionPolicy<K> {
    private final EvictionPolicy<K> inner;
    private final Predicate<K> preferred;

    public PreferringPolicy(EvictionPolicy<K> inner, Predicate<K> preferred) {
        this.inner = inner;
        this.preferred = preferred;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public void onHit(K key) {
        inner.onHit(key);
    }

    @Override
    public boolean admit(K key, long weight, boolean mustEvict) {
        boolean admitted = inner.admit(key, weight, mustEvict);
        return admitted && (!mustEvict || preferred.test(key));
    }

    @Override
    public boolean admitAhead(K key, long weight, boolean mustEvict) {
        boolean admitted = inner.admitAhead(key, weight, mustEvict);
        return admitted && (!mustEvict || preferred.test(key));
    }

    @Override
    public void onAdd(K key, long weight) {
        inner.onAdd(key, weight);
    }

    @Override
    public void onRemove(K key) {
        inner.onRemove(key);
    }

    @Override
    public K victim(Predicate<K> evictable) {
        K second = inner.victim(k -> evictable.test(k) && !preferred.test(k));
        return second != null ? second : inner.victim(evictable);
    }
}
