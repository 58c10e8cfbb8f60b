package dev.ferry.store;

import java.io.IOException;
import java.io.InterruptedIOException;

/** Adds a fixed delay before every read reaches the store below: makes concurrent misses overlap for real. */
public final class LatencyStore extends ForwardingObjectStore {
    private final long millis;

    public LatencyStore(ObjectStore delegate, long millis) {
        super(delegate);
        this.millis = millis;
    }

    private void pause() throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException();
        }
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        pause();
        return delegate.head(key);
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        pause();
        return delegate.get(request);
    }
}
