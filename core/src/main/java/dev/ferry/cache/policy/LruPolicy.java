package dev.ferry.cache.policy;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.function.Predicate;

/** Least recently used: evicts the entry accessed longest ago; admits everything. */
public final class LruPolicy<K> implements EvictionPolicy<K> {
    private final LinkedHashMap<K, Boolean> order = new LinkedHashMap<>(16, 0.75f, true);

    @Override
    public String name() {
        return "lru";
    }

    @Override
    public void onHit(K key) {
        order.get(key); // access order: moves it to the most recent end
    }

    @Override
    public boolean admit(K key, long weight, boolean mustEvict) {
        return true;
    }

    @Override
    public void onAdd(K key, long weight) {
        order.put(key, Boolean.TRUE);
    }

    @Override
    public void onRemove(K key) {
        order.remove(key);
    }

    @Override
    public K victim(Predicate<K> evictable) {
        for (Iterator<K> it = order.keySet().iterator(); it.hasNext(); ) {
            K key = it.next();
            if (evictable.test(key)) {
                return key;
            }
        }
        return null;
    }
}
