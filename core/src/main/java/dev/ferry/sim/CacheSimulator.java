package dev.ferry.sim;

import dev.ferry.cache.policy.EvictionPolicy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Replays accesses through one policy over a cache of {@code capacity} bytes, exactly as the local tier
 * drives its policy: a hit is reported, a miss asks for admission, room is made by evicting victims.
 * An object larger than the whole cache is never admitted. Feed it one access at a time ({@link #access}),
 * reading {@link #result()} whenever a tally is wanted (per epoch, say), or replay a whole trace
 * ({@link #run}). Not thread-safe.
 *
 * @param <K> the key of an access (a trace key, a block id)
 */
public final class CacheSimulator<K> {
    private final long capacity;
    private final EvictionPolicy<K> policy;
    private final Map<K, Long> resident = new HashMap<>();
    private long used;
    private long requests;
    private long hits;
    private long bytes;
    private long hitBytes;
    private long upstream;

    public CacheSimulator(long capacity, EvictionPolicy<K> policy) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity is negative: " + capacity);
        }
        this.capacity = capacity;
        this.policy = policy;
    }

    /** Replays a whole trace with a fresh simulator. */
    public static SimResult run(List<Access> trace, long capacity, EvictionPolicy<String> policy) {
        CacheSimulator<String> sim = new CacheSimulator<>(capacity, policy);
        for (Access a : trace) {
            sim.access(a.key(), a.size());
        }
        return sim.result();
    }

    /** One access of a whole entry; true when it hit. */
    public boolean access(K key, long size) {
        return access(key, size, size);
    }

    /**
     * One access that wants {@code needed} bytes of an entry of {@code size} bytes (a sample within a block);
     * true when it hit. A miss fetches the whole entry when it is kept, only the needed bytes when not.
     */
    public boolean access(K key, long size, long needed) {
        requests++;
        bytes += needed;
        Long cached = resident.get(key);
        if (cached != null && cached == size) {
            hits++;
            hitBytes += needed;
            policy.onHit(key);
            return true;
        }
        if (cached != null) { // same key, new size: a new version; the old one goes
            resident.remove(key);
            used -= cached;
            policy.onRemove(key);
        }
        boolean mustEvict = used + size > capacity;
        if (!policy.admit(key, size, mustEvict) || size > capacity) {
            upstream += needed;
            return false;
        }
        while (used + size > capacity) {
            K victim = policy.victim(k -> true);
            if (victim == null) {
                break;
            }
            used -= resident.remove(victim);
            policy.onRemove(victim);
        }
        if (used + size <= capacity) {
            resident.put(key, size);
            used += size;
            policy.onAdd(key, size);
            upstream += size;
        } else {
            upstream += needed;
        }
        return false;
    }

    /** The tally so far. */
    public SimResult result() {
        return new SimResult(policy.name(), requests, hits, bytes, hitBytes, upstream);
    }
}
