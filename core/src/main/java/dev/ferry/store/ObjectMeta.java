package dev.ferry.store;

import java.time.Instant;
import java.util.Objects;

/**
 * What a store knows about one object version: size, ETag, version id (null where the store has no
 * versioning), last-modified time and the attributes a client stored with it (content type, user metadata).
 *
 * <p>The ETag (or version id) is part of an object's identity for every cache tier: bytes read under one
 * ETag are never served as another.
 */
public record ObjectMeta(ObjectKey key, long size, String etag, String versionId, Instant lastModified, ObjectAttributes attributes) {
    /** An object with no attributes. */
    public ObjectMeta(ObjectKey key, long size, String etag, String versionId, Instant lastModified) {
        this(key, size, etag, versionId, lastModified, ObjectAttributes.NONE);
    }

    public ObjectMeta {
        Objects.requireNonNull(key, "key is null");
        if (size < 0) {
            throw new IllegalArgumentException("size is negative: " + size);
        }
        if (etag == null || etag.isEmpty()) {
            throw new IllegalArgumentException("etag is missing for " + key);
        }
        etag = stripQuotes(etag);
        Objects.requireNonNull(lastModified, "lastModified is null");
        Objects.requireNonNull(attributes, "attributes is null");
    }

    public ObjectMeta withAttributes(ObjectAttributes a) {
        return new ObjectMeta(key, size, etag, versionId, lastModified, a);
    }

    /** ETags travel quoted in HTTP; ferry stores and compares them unquoted. */
    public static String stripQuotes(String etag) {
        if (etag != null && etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"")) {
            return etag.substring(1, etag.length() - 1);
        }
        return etag;
    }
}
