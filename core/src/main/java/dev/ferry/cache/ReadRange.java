package dev.ferry.cache;

import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.StoreException;

/** The bytes a GET reads of an object, as S3 answers it: the whole object, or its range clipped to the object's end. */
final class ReadRange {
    private ReadRange() {
    }

    /** The range {@code request} reads of {@code meta}: null for an empty object; 416 when it starts past the end. */
    static ByteRange of(GetRequest request, ObjectMeta meta) throws StoreException {
        if (request.range() == null) {
            return meta.size() == 0 ? null : ByteRange.of(0, meta.size());
        }
        ByteRange range = request.range().clip(meta.size());
        if (range == null) {
            throw new StoreException(StoreException.Kind.FATAL, 416, "range " + request.range().toHttpHeader()
                    + " starts past the end of " + request.key() + " (" + meta.size() + " bytes)", null);
        }
        return range;
    }
}
