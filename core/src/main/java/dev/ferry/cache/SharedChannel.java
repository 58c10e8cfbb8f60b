package dev.ferry.cache;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A read-only channel with a count of its holders, closed when the last lets go. A block being filled is read
 * through one of these while its file is written, renamed into place, evicted or discarded: an open channel
 * keeps reading the bytes whatever happens to the name. Positional reads on it are safe from many threads.
 *
 * <p>Thread-safe.
 */
final class SharedChannel {
    final FileChannel channel;
    private int holders = 1; // guarded by this

    private SharedChannel(FileChannel channel) {
        this.channel = channel;
    }

    /** {@code channel}, held once (by the caller), closed with its last holder. */
    static SharedChannel of(FileChannel channel) {
        return new SharedChannel(channel);
    }

    /** Opens {@code path} for reading, held once (by the caller). */
    static SharedChannel open(Path path) throws IOException {
        return new SharedChannel(FileChannel.open(path, StandardOpenOption.READ));
    }

    /** One more holder; false when the channel is already closed. */
    synchronized boolean retain() {
        if (holders == 0) {
            return false;
        }
        holders++;
        return true;
    }

    void release() {
        boolean close;
        synchronized (this) {
            if (holders == 0) {
                throw new IllegalStateException("released more often than held");
            }
            close = --holders == 0;
        }
        if (close) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // read-only
            }
        }
    }
}
