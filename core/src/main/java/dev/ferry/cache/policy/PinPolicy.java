package dev.ferry.cache.policy;

import java.util.function.Predicate;

/**
 * No eviction: admit until full, then keep what is there and let the rest bypass. On uniformly shuffled
 * epochs every entry is read once per epoch, so a full cache of any fixed subset hits at the cache-to-
 * dataset ratio, where LRU falls to almost nothing once the dataset outgrows it (CoorDL, Mohan et al.,
 * VLDB 2021).
 */
public final class PinPolicy<K> implements EvictionPolicy<K> {
    @Override
    public String name() {
        return "pin";
    }

    @Override
    public void onHit(K key) {
    }

    @Override
    public boolean admit(K key, long weight, boolean mustEvict) {
        return !mustEvict;
    }

    @Override
    public void onAdd(K key, long weight) {
    }

    @Override
    public void onRemove(K key) {
    }

    @Override
    public K victim(Predicate<K> evictable) {
        return null;
    }
}
