package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.S3Error;
import dev.ferry.store.ObjectKey;
import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock per object key, held by every write of that key through the daemon (PUT, CompleteMultipartUpload,
 * DELETE) from its precondition check to its commit: a conditional write ({@code If-None-Match: *},
 * {@code If-Match}) cannot be overtaken by another write of the key between checking and writing. Writes of
 * different keys never wait for each other; a key's lock is dropped when nobody holds or waits for it.
 * Thread-safe.
 */
final class KeyLocks {
    /** A write run under a key's lock. */
    interface Write<T> {
        T run() throws S3Error, IOException;
    }

    private static final class Holder {
        final ReentrantLock lock = new ReentrantLock();
        int users; // changed only inside the map's compute for this key
    }

    private final ConcurrentHashMap<ObjectKey, Holder> locks = new ConcurrentHashMap<>();

    <T> T with(ObjectKey key, Write<T> write) throws S3Error, IOException {
        Holder h = locks.compute(key, (k, v) -> {
            Holder held = v == null ? new Holder() : v;
            held.users++;
            return held;
        });
        h.lock.lock();
        try {
            return write.run();
        } finally {
            h.lock.unlock();
            locks.computeIfPresent(key, (k, v) -> --v.users == 0 ? null : v);
        }
    }
}
