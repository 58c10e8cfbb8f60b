package dev.ferry.store;

import java.io.IOException;

/**
 * Optional ability: a store that can tell where one part of an object made by a multipart upload lies (S3
 * answers a {@code HEAD ?partNumber=N} with the part's {@code Content-Range}).
 */
public interface PartRanges {
    /**
     * The bytes of part {@code partNumber} of {@code key} while it has {@code etag} (else 412), or null when the
     * store cannot tell (it does not keep parts apart).
     */
    ByteRange partRange(ObjectKey key, String etag, int partNumber) throws IOException;
}
