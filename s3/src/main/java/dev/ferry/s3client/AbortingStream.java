package dev.ferry.s3client;

import java.io.FilterInputStream;
import java.io.IOException;
import software.amazon.awssdk.core.ResponseInputStream;

/**
 * A GET's body that, closed with much of it unread, drops its connection instead of reading the rest: the
 * SDK's HTTP client would otherwise drain the body to reuse the connection, reading (and the store sending, and
 * billing) every byte left, which for a whole object read only for its first blocks may be gigabytes. A little
 * left ({@link #DRAIN_AT_MOST}) is still drained, since a kept connection costs less than a new one.
 */
final class AbortingStream extends FilterInputStream {
    /** Unread bytes below which closing drains them and keeps the connection. */
    static final long DRAIN_AT_MOST = 256 * 1024;

    private final ResponseInputStream<?> response;
    private final long length;
    private long read;
    private boolean closed;

    /** {@code response}, whose body is {@code length} bytes (-1: not known, closed as the SDK closes it). */
    AbortingStream(ResponseInputStream<?> response, long length) {
        super(response);
        this.response = response;
        this.length = length;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b >= 0) {
            read++;
        }
        return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        int n = super.read(b, off, len);
        if (n > 0) {
            read += n;
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        long skipped = super.skip(n);
        read += Math.max(0, skipped);
        return skipped;
    }

    @Override
    public boolean markSupported() {
        return false; // the count of bytes read would not follow a reset
    }

    /** Bytes of the body not read yet; -1 when its length is not known. */
    long unread() {
        return length < 0 ? -1 : length - read;
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        if (unread() > DRAIN_AT_MOST) {
            response.abort();
        }
        response.close();
    }
}
