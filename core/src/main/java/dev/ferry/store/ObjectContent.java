package dev.ferry.store;

import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;

/**
 * An open read: the object's metadata, the range actually returned (clipped to the object) and a stream of
 * exactly {@code range.length()} bytes. Close it to release the connection.
 *
 * <p>Not thread-safe: one reader at a time.
 */
public final class ObjectContent implements AutoCloseable {
    private final ObjectMeta meta;
    private final ByteRange range;
    private final InputStream stream;

    public ObjectContent(ObjectMeta meta, ByteRange range, InputStream stream) {
        this.meta = Objects.requireNonNull(meta, "meta is null");
        this.range = range;
        this.stream = Objects.requireNonNull(stream, "stream is null");
        if (range == null && meta.size() != 0) {
            throw new IllegalArgumentException("range is null for a non-empty object " + meta.key());
        }
    }

    public ObjectMeta meta() {
        return meta;
    }

    /** The bytes this content holds; null only for an empty object. */
    public ByteRange range() {
        return range;
    }

    /** Number of bytes the stream yields. */
    public long length() {
        return range == null ? 0 : range.length();
    }

    public InputStream stream() {
        return stream;
    }

    /** Reads the rest of the stream and closes it. */
    public byte[] readAllBytes() throws IOException {
        try (this) {
            return stream.readAllBytes();
        }
    }

    @Override
    public void close() throws IOException {
        stream.close();
    }
}
