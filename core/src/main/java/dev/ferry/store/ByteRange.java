package dev.ferry.store;

/**
 * A contiguous range of bytes: {@code length} bytes starting at {@code offset}.
 *
 * <p>A range may run past the end of an object; stores clip it to the object's size, as S3 does.
 */
public record ByteRange(long offset, long length) {
    public ByteRange {
        if (offset < 0) {
            throw new IllegalArgumentException("offset is negative: " + offset);
        }
        if (length <= 0) {
            throw new IllegalArgumentException("length must be positive: " + length);
        }
        if (offset + length < 0) {
            throw new IllegalArgumentException("offset + length overflows: " + offset + " + " + length);
        }
    }

    public static ByteRange of(long offset, long length) {
        return new ByteRange(offset, length);
    }

    /** The range from {@code offset} to the end of any object. */
    public static ByteRange from(long offset) {
        return new ByteRange(offset, Long.MAX_VALUE - offset);
    }

    /** One past the last byte: {@code offset + length}. */
    public long end() {
        return offset + length;
    }

    /** This range clipped to an object of {@code size} bytes, or null when it starts at or past the end. */
    public ByteRange clip(long size) {
        if (offset >= size) {
            return null;
        }
        return new ByteRange(offset, Math.min(length, size - offset));
    }

    /** The HTTP Range header value for this range, e.g. {@code bytes=0-99}. */
    public String toHttpHeader() {
        if (length >= Long.MAX_VALUE - offset) {
            return "bytes=" + offset + "-";
        }
        return "bytes=" + offset + "-" + (end() - 1);
    }
}
