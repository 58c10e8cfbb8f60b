package dev.ferry.tier;

import dev.ferry.cache.CachingStore;
import dev.ferry.cache.VersionPin;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import java.io.IOException;

/**
 * What only the local tier knows or can be told about objects, apart from reading and writing them: the
 * metadata it holds fresh, versions a listing named, versions a reader pins ({@link NodeStores#hints()}). With no
 * local tier, every answer is "not known" and every hint a no-op. Thread-safe.
 */
public final class TierHints {
    private final CachingStore cache;

    TierHints(CachingStore cache) {
        this.cache = cache;
    }

    /** The object's metadata when the tier holds it fresh, without asking upstream (for callers that must not block); null otherwise. */
    public ObjectMeta freshMeta(ObjectKey key) {
        return cache == null ? null : cache.freshMeta(key);
    }

    /** The metadata the tier holds for {@code key} when it is version {@code etag}, however old; null otherwise. */
    public ObjectMeta knownMeta(ObjectKey key, String etag) {
        return cache == null ? null : cache.knownMeta(key, etag);
    }

    /** {@code meta} with the object's checksum where the store keeps one ({@link CachingStore#withChecksum}). */
    public ObjectMeta withChecksum(ObjectKey key, ObjectMeta meta, boolean wait) throws IOException {
        return cache == null ? meta : cache.withChecksum(key, meta, wait);
    }

    /** Metadata a listing gave, remembered as a HEAD's answer would be ({@link CachingStore#listed}). */
    public void listed(ObjectMeta meta) {
        if (cache != null) {
            cache.listed(meta);
        }
    }

    /** {@link #listed}, only when the tier holds no metadata for the key at all ({@link CachingStore#listedIfUnknown}). */
    public void listedIfUnknown(ObjectMeta meta) {
        if (cache != null) {
            cache.listedIfUnknown(meta);
        }
    }

    /** Keeps {@code meta}'s version readable from local disk until the pin is closed ({@link CachingStore#pinVersion}); null with no tier. */
    public VersionPin pinVersion(ObjectMeta meta) {
        return cache == null ? null : cache.pinVersion(meta);
    }

    /** Bytes of blocks the tier holds on disk (0 with no tier). */
    public long residentBytes() {
        return cache == null ? 0 : cache.stats().residentBytes();
    }
}
