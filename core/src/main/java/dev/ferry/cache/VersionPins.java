package dev.ferry.cache;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import java.util.HashMap;
import java.util.Map;

/**
 * The versions readers have pinned ({@link CachingStore#pinVersion}): per key and ETag, how many hold it, and
 * whether a newer version (or a delete) has been seen since. A superseded pinned version keeps its resident
 * blocks, and no eviction takes them, until its last pin goes; {@link BlockIndex} asks here before it drops or
 * evicts a block.
 *
 * <p>Not thread-safe: guarded by the {@link BlockIndex}'s lock, like the entries it protects.
 */
final class VersionPins {
    /** Holders of a pinned version, and whether it has been superseded. */
    private static final class Pin {
        final ObjectMeta meta;
        int holders;
        boolean superseded;

        Pin(ObjectMeta meta) {
            this.meta = meta;
        }
    }

    private final Map<ObjectKey, Map<String, Pin>> byKey = new HashMap<>();

    /** One more holder of {@code meta}'s version; every call needs one {@link #unpin}. */
    void pin(ObjectMeta meta) {
        byKey.computeIfAbsent(meta.key(), k -> new HashMap<>()).computeIfAbsent(meta.etag(), e -> new Pin(meta)).holders++;
    }

    /** Drops one holder of {@code meta}'s version; true when it was the last of a superseded version: its blocks may go now. */
    boolean unpin(ObjectMeta meta) {
        Map<String, Pin> pins = byKey.get(meta.key());
        Pin p = pins == null ? null : pins.get(meta.etag());
        if (p == null || --p.holders > 0) {
            return false;
        }
        pins.remove(meta.etag());
        if (pins.isEmpty()) {
            byKey.remove(meta.key());
        }
        return p.superseded;
    }

    /** {@code etag} is {@code key}'s version now (null: the key is gone): every other pinned version of it is superseded. */
    void current(ObjectKey key, String etag) {
        byKey.getOrDefault(key, Map.of()).forEach((pinned, p) -> p.superseded = !pinned.equals(etag));
    }

    /** True when {@code key}'s version {@code etag} is pinned. */
    boolean pinned(ObjectKey key, String etag) {
        return byKey.getOrDefault(key, Map.of()).containsKey(etag);
    }

    /** The metadata of a pinned version of {@code key}, current or superseded; null when {@code etag} is not pinned. */
    ObjectMeta meta(ObjectKey key, String etag) {
        Pin p = byKey.getOrDefault(key, Map.of()).get(etag);
        return p == null ? null : p.meta;
    }

    /** True for a block no eviction may take: of a pinned version the store no longer has. */
    boolean holdsSuperseded(BlockId id) {
        if (byKey.isEmpty()) {
            return false;
        }
        Pin p = byKey.getOrDefault(id.key(), Map.of()).get(id.etag());
        return p != null && p.superseded;
    }
}
