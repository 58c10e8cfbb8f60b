package dev.ferry.store;

import java.util.Objects;

/**
 * A read of an object: the whole object when {@code range} is null, otherwise that range; when
 * {@code ifMatch} is set the store refuses (with {@link StoreException.Kind#PRECONDITION_FAILED}) to
 * return any other version. With {@code checksum} the reader also asks for the object's checksum (S3's
 * {@code x-amz-checksum-mode: ENABLED}): a store that keeps one names it in the answer's attributes, and only for a
 * read of the whole object (S3 names none for a range).
 */
public record GetRequest(ObjectKey key, ByteRange range, String ifMatch, boolean checksum) {
    public GetRequest {
        Objects.requireNonNull(key, "key is null");
        ifMatch = ifMatch == null ? null : ObjectMeta.stripQuotes(ifMatch);
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

    public GetRequest withRange(ByteRange newRange) {
        return new GetRequest(key, newRange, ifMatch, checksum);
    }

    public GetRequest withIfMatch(String etag) {
        return new GetRequest(key, range, etag, checksum);
    }

    /** This read asking for the object's checksum too. */
    public GetRequest withChecksum() {
        return new GetRequest(key, range, ifMatch, true);
    }

    /** Whether the answer can name the object's checksum: a read of the whole object that asked for it. */
    public boolean checksumAnswerable() {
        return checksum && range == null;
    }
}
