package dev.ferry.store;

import java.util.Objects;

/**
 * A read of an object: the whole object when {@code range} is null, otherwise that range; when
 * {@code ifMatch} is set the store refuses (with {@link StoreException.Kind#PRECONDITION_FAILED}) to
 * return any other version.
 */
public record GetRequest(ObjectKey key, ByteRange range, String ifMatch) {
    public GetRequest {
        Objects.requireNonNull(key, "key is null");
        ifMatch = ifMatch == null ? null : ObjectMeta.stripQuotes(ifMatch);
    }

    public static GetRequest whole(ObjectKey key) {
        return new GetRequest(key, null, null);
    }

    public static GetRequest range(ObjectKey key, ByteRange range) {
        return new GetRequest(key, Objects.requireNonNull(range, "range is null"), null);
    }

    public GetRequest withRange(ByteRange newRange) {
        return new GetRequest(key, newRange, ifMatch);
    }

    public GetRequest withIfMatch(String etag) {
        return new GetRequest(key, range, etag);
    }
}
