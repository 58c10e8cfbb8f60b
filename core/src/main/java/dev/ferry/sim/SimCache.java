package dev.ferry.sim;

import dev.ferry.cache.policy.EvictionPolicy;
import java.util.HashMap;
import java.util.Map;

/**
 * One simulated local tier: the same protocol as {@code CachingStore} (ask the policy before fetching,
 * evict from the high watermark down to the low one, 95% and 90% as in {@code CacheConfig}'s defaults; a block
 * the policy knows the next use of makes only its own room below the high watermark, as the local tier's
 * {@code BlockIndex} does) over a policy instance of the shipped classes. Not thread-safe.
 */
final class SimCache<K> {
    static final double HIGH = 0.95;
    static final double LOW = 0.90;

    private final EvictionPolicy<K> policy;
    private final long capacity;
    private final Map<K, Long> resident = new HashMap<>();
    private long used;
    long hits;
    long misses;

    SimCache(EvictionPolicy<K> policy, long capacity) {
        this.policy = policy;
        this.capacity = capacity;
    }

    boolean contains(K key) {
        return resident.containsKey(key);
    }

    /** A read of a block: true on a hit; on a miss, keeps it when the policy admits it and it fits. */
    boolean access(K key, long weight) {
        if (resident.containsKey(key)) {
            hits++;
            policy.onHit(key);
            return true;
        }
        misses++;
        long high = (long) (capacity * HIGH);
        boolean mustEvict = used + weight > high;
        boolean planned = EvictionPolicy.isPlanned(policy.plannedUse(key)); // before admit: MIN's admit consumes the use
        if (!policy.admit(key, weight, mustEvict)) {
            return false;
        }
        if (mustEvict) {
            long target = (long) (capacity * (planned ? HIGH : LOW));
            while (used + weight > target) {
                K victim = policy.victim(resident::containsKey);
                if (victim == null) {
                    break;
                }
                used -= resident.remove(victim);
                policy.onRemove(victim);
            }
        }
        if (used + weight > capacity) {
            policy.onRemove(key);
            return false;
        }
        resident.put(key, weight);
        used += weight;
        policy.onAdd(key, weight);
        return false;
    }
}
