package dev.ferry.store.shared;

import dev.ferry.store.ObjectKey;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Rendezvous (highest-random-weight) hashing: every key ranks every member by a hash of (member, key), and
 * the member ranked first owns the key. Every node computes the same ranking from the same member list, with
 * no coordination; adding a member moves to it only the keys it now ranks first for, and removing one moves
 * only its own keys (to the member each of them ranked second). Thread-safe (immutable).
 */
public final class Rendezvous {
    private final List<String> members;
    private final long[] seeds;

    public Rendezvous(List<String> members) {
        if (members.isEmpty()) {
            throw new IllegalArgumentException("a group needs at least one member");
        }
        if (members.stream().distinct().count() != members.size()) {
            throw new IllegalArgumentException("group members must be distinct: " + members);
        }
        this.members = List.copyOf(members);
        this.seeds = new long[members.size()];
        for (int i = 0; i < seeds.length; i++) {
            seeds[i] = hash(members.get(i).getBytes(StandardCharsets.UTF_8), 0x9E3779B97F4A7C15L);
        }
    }

    public List<String> members() {
        return members;
    }

    /** The members' indexes in the order {@code key} ranks them: the owner first. */
    public List<Integer> rank(String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        long[] score = new long[members.size()];
        List<Integer> order = new ArrayList<>(members.size());
        for (int i = 0; i < score.length; i++) {
            score[i] = hash(k, seeds[i]);
            order.add(i);
        }
        order.sort(Comparator.<Integer>comparingLong(i -> score[i]).reversed().thenComparing(i -> members.get(i)));
        return order;
    }

    /** The index of the member that owns {@code key}. */
    public int owner(String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        int best = 0;
        long bestScore = Long.MIN_VALUE;
        for (int i = 0; i < seeds.length; i++) {
            long s = hash(k, seeds[i]);
            if (s > bestScore || (s == bestScore && members.get(i).compareTo(members.get(best)) < 0)) {
                best = i;
                bestScore = s;
            }
        }
        return best;
    }

    /** The key a rendezvous ranking is computed on: one object, so all its blocks share an owner. */
    public static String keyOf(ObjectKey key) {
        return key.bucket() + "/" + key.key();
    }

    /** A stable 64-bit hash of a string (the same on every JVM): for sampling keys. */
    public static long hashOf(String s) {
        return hash(s.getBytes(StandardCharsets.UTF_8), 0);
    }

    /** FNV-1a over the bytes from a seed, then SplitMix64's finalizer: well mixed, cheap, stable across JVMs. */
    static long hash(byte[] data, long seed) {
        long h = 0xcbf29ce484222325L ^ seed;
        for (byte b : data) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
        h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
        return h ^ (h >>> 31);
    }
}
