package dev.ferry.sim;

import dev.ferry.cache.policy.EvictionPolicy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Replays a trace through one policy over a cache of {@code capacity} bytes, exactly as the local tier
 * drives its policy: a hit is reported, a miss asks for admission, room is made by evicting victims.
 * An object larger than the whole cache is never admitted. Not thread-safe; one run per instance.
 */
public final class CacheSimulator {
    private CacheSimulator() {
    }

    public static SimResult run(List<Access> trace, long capacity, EvictionPolicy<String> policy) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity is negative: " + capacity);
        }
        Map<String, Long> resident = new HashMap<>();
        long used = 0;
        long hits = 0;
        long bytes = 0;
        long hitBytes = 0;
        for (Access a : trace) {
            bytes += a.size();
            Long size = resident.get(a.key());
            if (size != null && size == a.size()) {
                hits++;
                hitBytes += a.size();
                policy.onHit(a.key());
                continue;
            }
            if (size != null) { // same key, new size: a new version; the old one goes
                resident.remove(a.key());
                used -= size;
                policy.onRemove(a.key());
            }
            boolean mustEvict = used + a.size() > capacity;
            if (!policy.admit(a.key(), a.size(), mustEvict) || a.size() > capacity) {
                continue;
            }
            while (used + a.size() > capacity) {
                String victim = policy.victim(k -> true);
                if (victim == null) {
                    break;
                }
                used -= resident.remove(victim);
                policy.onRemove(victim);
            }
            if (used + a.size() <= capacity) {
                resident.put(a.key(), a.size());
                used += a.size();
                policy.onAdd(a.key(), a.size());
            }
        }
        return new SimResult(policy.name(), trace.size(), hits, bytes, hitBytes);
    }
}
