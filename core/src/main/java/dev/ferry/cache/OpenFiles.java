package dev.ferry.cache;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Block files kept open between reads: a hit then costs positional reads only, not an open and a close. At
 * most {@code capacity} files stay open (least recently used closed first); a channel is closed only once
 * no reader holds it. Positional reads on a shared channel are safe from many threads. Each open file also
 * knows which file it is (its file key, inode and device, read just after the open) and can say whether a
 * range of it is in the page cache ({@link Handle#resident}, for {@link BlockCheck}). Thread-safe.
 */
final class OpenFiles {
    /** A shared open channel; release it when done. */
    final class Handle {
        final FileChannel channel;
        /** The file's key (inode and device) when it was opened, or null when it could not be read. */
        final Object fileKey;
        private final Path path;
        private int refs;
        private boolean retired;
        private MappedByteBuffer mapping;
        private boolean unmappable;

        private Handle(Path path, FileChannel channel, Object fileKey) {
            this.path = path;
            this.channel = channel;
            this.fileKey = fileKey;
        }

        /**
         * True when every page of the file's bytes {@code [position, position + length)} is in the page cache now
         * (mincore over a read-only mapping of the file that is never touched, so it neither loads pages nor keeps
         * them); false when one is not, or this cannot tell. The mapping lives as long as this handle and is
         * unmapped when it is collected (the JDK offers no earlier unmap that does not warn).
         */
        boolean resident(long position, long length) {
            MappedByteBuffer m = mapping();
            if (m == null || position < 0 || length < 0 || position + length > m.capacity()) {
                return false;
            }
            return length == 0 || m.slice((int) position, (int) length).isLoaded();
        }

        private synchronized MappedByteBuffer mapping() {
            if (mapping == null && !unmappable) {
                try {
                    long size = channel.size();
                    if (size > Integer.MAX_VALUE) {
                        unmappable = true;
                    } else {
                        mapping = channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
                    }
                } catch (IOException | RuntimeException e) {
                    unmappable = true; // then nothing of it counts as resident: every use is checked
                }
            }
            return mapping;
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
        Object fileKey;
        try {
            fileKey = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            fileKey = null;
        }
        synchronized (this) {
            Handle h = open.get(path);
            if (h != null) { // opened by another reader meanwhile
                h.refs++;
                closeQuietly(channel);
                return h;
            }
            h = new Handle(path, channel, fileKey);
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
