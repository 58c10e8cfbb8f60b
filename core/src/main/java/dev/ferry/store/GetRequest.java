package dev.ferry.store;

import java.util.Objects;

/**
 * A read of an object: the whole object when {@code range} is null, otherwise that range; when
 * {@code ifMatch} is set the store refuses (with {@link StoreException.Kind#PRECONDITION_FAILED}) to
 * return any other version. With {@code checksum} the reader also asks for the object's checksum (S3's
 * {@code x-amz-checksum-mode: ENABLED}): a store that keeps one names it in the answer's attributes, and only for a
 * read of the whole object (S3 names none for a range).
 *
 * <p>{@code reach} says how far the read may go for its bytes ({@link Reach}); a store with no local disk of its own
 * honours only {@link Reach#ANYWHERE}, and the node's door ({@code dev.ferry.tier.NodeStores}) sends the others only
 * to the local tier. {@code version}, when set, is the object's metadata as this node answered it a moment ago (the
 * local tier's, or write-back's for a write of those bytes: one ETag, one size): the local tier reads that version
 * without looking the key up again. It sets {@code ifMatch}; a store below the local tier ignores it.
 */
public record GetRequest(ObjectKey key, ByteRange range, String ifMatch, boolean checksum, Reach reach, ObjectMeta version) {
    /** How far a read may go for its bytes. */
    public enum Reach {
        /** Wherever they are: the local tier, the tiers below it, the object store. */
        ANYWHERE,
        /** Only blocks on local disk, all of them ("cached only"): no fetch; a block not trusted yet is checked first (reading the disk). */
        CACHED,
        /** Only blocks on local disk that need no check ("don't block"): for a server's event loop. */
        CACHED_NOW
    }

    public GetRequest {
        Objects.requireNonNull(key, "key is null");
        Objects.requireNonNull(reach, "reach is null");
        if (version != null) {
            if (!version.key().equals(key)) {
                throw new IllegalArgumentException("version " + version.key() + " is not of " + key);
            }
            ifMatch = version.etag();
        }
        ifMatch = ifMatch == null ? null : ObjectMeta.stripQuotes(ifMatch);
    }

    public GetRequest(ObjectKey key, ByteRange range, String ifMatch, boolean checksum) {
        this(key, range, ifMatch, checksum, Reach.ANYWHERE, null);
    }

    public GetRequest(ObjectKey key, ByteRange range, String ifMatch) {
        this(key, range, ifMatch, false);
    }

    public static GetRequest whole(ObjectKey key) {
        return new GetRequest(key, null, null);
    }

    public static GetRequest range(ObjectKey key, ByteRange range) {
        return new GetRequest(key, Objects.requireNonNull(range, "range is null"), null);
    }

    /** A read of {@code range} (null: all) of the version {@code version} names, as the local tier answered it (see the class comment). */
    public static GetRequest of(ObjectMeta version, ByteRange range) {
        return new GetRequest(version.key(), range, version.etag(), false, Reach.ANYWHERE, version);
    }

    public GetRequest withRange(ByteRange newRange) {
        return new GetRequest(key, newRange, ifMatch, checksum, reach, version);
    }

    public GetRequest withIfMatch(String etag) {
        return new GetRequest(key, range, etag, checksum, reach, version != null && version.etag().equals(etag) ? version : null);
    }

    /** This read asking for the object's checksum too. */
    public GetRequest withChecksum() {
        return new GetRequest(key, range, ifMatch, true, reach, version);
    }

    /** This read going only as far as {@code newReach}. */
    public GetRequest reaching(Reach newReach) {
        return new GetRequest(key, range, ifMatch, checksum, newReach, version);
    }

    /** True for a read that may go only to blocks on local disk. */
    public boolean cachedOnly() {
        return reach != Reach.ANYWHERE;
    }

    /** Whether the answer can name the object's checksum: a read of the whole object that asked for it. */
    public boolean checksumAnswerable() {
        return checksum && range == null;
    }
}
