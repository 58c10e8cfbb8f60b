package dev.ferry.cache;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Block files kept open between reads: a hit then costs positional reads only, not an open and a close. At
 * most {@code capacity} files stay open (least recently used closed first); a channel is closed only once
 * no reader holds it. Positional reads on a shared channel are safe from many threads. Thread-safe.
 */
final class OpenFiles {
    /** A shared open channel; release it when done. */
    final class Handle {
        final FileChannel channel;
        private final Path path;
        private int refs;
        private boolean retired;

        private Handle(Path path, FileChannel channel) {
            this.path = path;
            this.channel = channel;
        }

        /** One more holder of a handle already held (a region of it being sent, say). */
        void retain() {
            synchronized (OpenFiles.this) {
                if (refs == 0) {
                    throw new IllegalStateException("retained after its last release: " + path);
                }
                refs++;
            }
        }

        void release() {
            boolean close;
            synchronized (OpenFiles.this) {
                refs--;
                close = retired && refs == 0;
            }
            if (close) {
                closeQuietly(channel);
            }
        }
    }

    private final int capacity;
    private final LinkedHashMap<Path, Handle> open = new LinkedHashMap<>(16, 0.75f, true);

    OpenFiles(int capacity) {
        this.capacity = capacity;
    }

    Handle acquire(Path path) throws IOException {
        synchronized (this) {
            Handle h = open.get(path);
            if (h != null) {
                h.refs++;
                return h;
            }
        }
        FileChannel channel = FileChannel.open(path, StandardOpenOption.READ);
        synchronized (this) {
            Handle h = open.get(path);
            if (h != null) { // opened by another reader meanwhile
                h.refs++;
                closeQuietly(channel);
                return h;
            }
            h = new Handle(path, channel);
            h.refs = 1;
            open.put(path, h);
            for (Iterator<Map.Entry<Path, Handle>> it = open.entrySet().iterator(); open.size() > capacity && it.hasNext(); ) {
                Handle old = it.next().getValue();
                if (old != h) {
                    it.remove();
                    retire(old);
                }
            }
            return h;
        }
    }

    /** The file is gone (evicted, stale, corrupt): close it once its readers are done. */
    void forget(Path path) {
        Handle h;
        synchronized (this) {
            h = open.remove(path);
            if (h != null) {
                retire(h);
            }
        }
    }

    synchronized void closeAll() {
        for (Handle h : open.values()) {
            retire(h);
        }
        open.clear();
    }

    private void retire(Handle h) {
        h.retired = true;
        if (h.refs == 0) {
            closeQuietly(h.channel);
        }
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // read-only
        }
    }
}
