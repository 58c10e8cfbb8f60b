package dev.ferry.serve.protocol;

import dev.ferry.store.ByteRange;
import dev.ferry.store.ObjectKey;

/** The Range header: one range, {@code bytes=a-b}, {@code bytes=a-} or {@code bytes=-n}. */
public final class Ranges {
    private Ranges() {
    }

    /**
     * The absolute range, clipped to the object; null for no header (or several ranges: S3 serves the whole
     * object then). A malformed header is a 400; a range starting past the end is a 416.
     */
    public static ByteRange parse(String header, long size, ObjectKey key) throws S3Error {
        if (header == null) {
            return null;
        }
        String h = header.trim();
        if (!h.startsWith("bytes=")) {
            throw S3Error.invalidArgument("the Range header must start with bytes=: '" + Uris.abbreviate(h) + "'");
        }
        String spec = h.substring("bytes=".length()).trim();
        if (spec.contains(",")) {
            return null;
        }
        int dash = spec.indexOf('-');
        if (dash < 0) {
            throw S3Error.invalidArgument("the Range header has no '-': '" + Uris.abbreviate(h) + "'");
        }
        String first = spec.substring(0, dash).trim();
        String last = spec.substring(dash + 1).trim();
        try {
            if (first.isEmpty()) {
                long n = Long.parseLong(last);
                if (n <= 0) {
                    throw unsatisfiable(h, size, key);
                }
                return size == 0 ? null : ByteRange.of(Math.max(0, size - n), Math.min(n, size));
            }
            long from = Long.parseLong(first);
            // bytes=N- with N at or past the end is unsatisfiable (416), not malformed: test it before to < from
            long to = last.isEmpty() ? Math.max(from, size - 1) : Long.parseLong(last);
            if (from < 0 || to < from) {
                throw S3Error.invalidArgument("the Range header is not a valid range: '" + Uris.abbreviate(h) + "'");
            }
            if (from >= size) {
                throw unsatisfiable(h, size, key);
            }
            return ByteRange.of(from, Math.min(to, size - 1) - from + 1);
        } catch (NumberFormatException e) {
            throw S3Error.invalidArgument("the Range header's positions are not numbers: '" + Uris.abbreviate(h) + "'");
        }
    }

    private static S3Error unsatisfiable(String header, long size, ObjectKey key) {
        return new S3Error(416, "InvalidRange", "the range " + header + " is not satisfiable: " + key + " has " + size + " bytes");
    }
}
