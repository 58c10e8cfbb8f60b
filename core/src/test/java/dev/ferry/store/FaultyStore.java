package dev.ferry.store;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketException;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * A store that fails on cue: queued failures are thrown by the next calls, and reads can be cut after a
 * number of bytes (as a reset connection would). Thread-safe.
 */
public final class FaultyStore extends ForwardingObjectStore {
    private final Deque<IOException> failures = new ArrayDeque<>();
    private long breakStreamsAfter = -1;
    private int streamBreaks;

    public FaultyStore(ObjectStore delegate) {
        super(delegate);
    }

    /** The next {@code times} calls throw {@code failure}. */
    public synchronized FaultyStore failNext(int times, IOException failure) {
        for (int i = 0; i < times; i++) {
            failures.add(failure);
        }
        return this;
    }

    /** Drops the failures still queued: the store answers again. */
    public synchronized FaultyStore heal() {
        failures.clear();
        return this;
    }

    /** The next {@code times} streams opened break with a connection reset after {@code bytes} bytes. */
    public synchronized FaultyStore breakStreams(int times, long bytes) {
        streamBreaks = times;
        breakStreamsAfter = bytes;
        return this;
    }

    public static StoreException slowDown() {
        return new StoreException(StoreException.Kind.THROTTLED, 503, "SlowDown: Please reduce your request rate.", null);
    }

    public static StoreException serverError() {
        return new StoreException(StoreException.Kind.RETRYABLE, 500, "InternalError", null);
    }

    private synchronized void maybeFail() throws IOException {
        IOException next = failures.poll();
        if (next != null) {
            throw next;
        }
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        maybeFail();
        return delegate.head(key);
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        maybeFail();
        ObjectContent content = delegate.get(request);
        long limit;
        synchronized (this) {
            if (streamBreaks <= 0) {
                return content;
            }
            streamBreaks--;
            limit = breakStreamsAfter;
        }
        return new ObjectContent(content.meta(), content.range(), new BreakingStream(content.stream(), limit));
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        maybeFail();
        return delegate.list(request);
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        maybeFail();
        return delegate.put(key, body);
    }

    private static final class BreakingStream extends FilterInputStream {
        private long left;

        BreakingStream(InputStream in, long left) {
            super(in);
            this.left = left;
        }

        @Override
        public int read() throws IOException {
            if (left <= 0) {
                throw new SocketException("Connection reset");
            }
            left--;
            return super.read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (left <= 0) {
                throw new SocketException("Connection reset");
            }
            int n = super.read(b, off, (int) Math.min(len, left));
            if (n > 0) {
                left -= n;
            }
            return n;
        }
    }
}
