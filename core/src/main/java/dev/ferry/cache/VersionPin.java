package dev.ferry.cache;

import dev.ferry.store.ObjectMeta;

/** A version kept readable from local disk ({@link CachingStore#pinVersion}); {@link #close} releases it, once. Thread-safe. */
public final class VersionPin implements AutoCloseable {
    private final ObjectMeta meta;
    private Runnable release;

    VersionPin(ObjectMeta meta, Runnable release) {
        this.meta = meta;
        this.release = release;
    }

    public ObjectMeta meta() {
        return meta;
    }

    @Override
    public synchronized void close() {
        if (release != null) {
            release.run();
            release = null;
        }
    }
}
