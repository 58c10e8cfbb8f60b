package dev.ferry.mount;

import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.tier.NodeStores;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Files being written, and the operations that change objects (truncate, delete, rename). A file created or opened
 * for writing is spooled to a local file and becomes one object at {@code flush} (every close), {@code fsync} and
 * the last release: through write-back (journaled locally, uploaded in the background) or, with write-through,
 * uploaded before close returns. S3 has no partial writes: a file opened for writing without {@code O_TRUNC} is
 * first copied to the spool, and the whole object is replaced. Readers of a path being written read its spool.
 *
 * <p>Thread-safe: files being written are a concurrent map; a file's spool is guarded by its {@link WriteHandle}.
 */
final class Writes {
    private final NodeStores stores;
    private final ObjectStore reader;
    private final Folders folders;
    private final Reads reads;
    private final Path spoolDir;
    private final Duration flushTimeout;
    private final Map<String, WriteHandle> writing = new ConcurrentHashMap<>();

    /** Files are read and written through {@code stores}, the node's door. */
    Writes(NodeStores stores, Folders folders, Reads reads, Path spoolDir, Duration flushTimeout) {
        this.stores = stores;
        this.reader = stores.top();
        this.folders = folders;
        this.reads = reads;
        this.spoolDir = spoolDir;
        this.flushTimeout = flushTimeout;
    }

    /** A handle on a file being written: the writer's, or a reader's of the same path (both read the spool). */
    record Ref(WriteHandle handle, boolean canWrite) {
    }

    /** The file being written at {@code path}, or null. */
    WriteHandle writing(String path) {
        return writing.get(path);
    }

    /** A reader's handle on the file being written at {@code path}; null when none is. */
    Ref openToRead(String path) {
        WriteHandle w = writing.get(path);
        return w != null && w.retain() ? new Ref(w, false) : null;
    }

    /** Opens {@code path} for writing: the file already being written there, else a new spool (a copy of the object unless truncated or created). */
    Ref open(String path, MountPath loc, boolean truncate, boolean create) throws IOException {
        WriteHandle existing = writing.get(path);
        if (existing != null && existing.retain()) {
            if (truncate) {
                existing.truncate(0);
            }
            return new Ref(existing, true);
        }
        Path spool = Files.createTempFile(spoolDir, "w", ".spool");
        FileChannel ch = FileChannel.open(spool, StandardOpenOption.READ, StandardOpenOption.WRITE);
        WriteHandle w = new WriteHandle(path, loc.object(), spool, ch);
        try {
            if (!create && !truncate) {
                // S3 replaces whole objects: start from the current bytes, so writes at offsets keep the rest
                try (ObjectContent c = reader.get(GetRequest.whole(loc.object())); InputStream in = c.stream()) {
                    long pos = 0;
                    byte[] tmp = new byte[1 << 20];
                    for (int k; (k = in.read(tmp)) > 0; ) {
                        ByteBuffer b = ByteBuffer.wrap(tmp, 0, k);
                        while (b.hasRemaining()) {
                            pos += ch.write(b, pos);
                        }
                    }
                }
            } else {
                w.dirty = true; // created or truncated: the object changes at close even if nothing is written
            }
        } catch (IOException e) {
            ch.close();
            Files.deleteIfExists(spool);
            throw e;
        }
        writing.put(path, w);
        return new Ref(w, true);
    }

    /** Sets the size of a file: of the one being written, or of an object (to zero only); 0 or -errno. */
    int truncate(String path, MountPath loc, long size, Ref ref) throws IOException {
        WriteHandle w = ref != null ? ref.handle() : writing.get(path);
        if (w != null) {
            w.truncate(size);
            return 0;
        }
        ObjectMeta meta = reader.head(loc.object());
        if (size == meta.size()) {
            return 0;
        }
        if (size != 0) {
            return -Errnos.EOPNOTSUPP; // a partial rewrite of an object not open here; open it for writing instead
        }
        put(loc.object(), PutBody.ofBytes(new byte[0]));
        written(path, loc.object());
        return 0;
    }

    /** Deletes the file at {@code path}; 0 or -errno. */
    int unlink(String path, MountPath loc) throws IOException {
        if (!exists(loc.object())) {
            return -Errnos.ENOENT;
        }
        delete(loc.object());
        written(path, loc.object());
        return 0;
    }

    /**
     * A file is renamed by copying it to the new key and deleting the old one (S3 has no rename): not atomic, and
     * it costs a read and a write of the bytes. A folder is refused with EXDEV, which {@code mv} answers by copying
     * file by file. 0 or -errno.
     */
    int rename(String oldpath, String newpath, MountPath from, MountPath to) throws IOException {
        WriteHandle w = writing.get(oldpath);
        if (w != null) {
            w.commit();
        }
        ObjectMeta meta;
        try {
            meta = reader.head(from.object());
        } catch (ObjectNotFoundException e) {
            return folders.isDir(from) ? -Errnos.EXDEV : -Errnos.ENOENT;
        }
        if (folders.isDir(to) && !exists(to.object())) {
            return -Errnos.EISDIR;
        }
        PutBody body = new PutBody() {
            @Override
            public long length() {
                return meta.size();
            }

            @Override
            public InputStream open() throws IOException {
                return reader.get(new GetRequest(meta.key(), null, meta.etag())).stream();
            }
        };
        put(to.object(), body);
        written(newpath, to.object());
        delete(from.object());
        written(oldpath, from.object());
        return 0;
    }

    boolean exists(ObjectKey key) throws IOException {
        try {
            reader.head(key);
            return true;
        } catch (ObjectNotFoundException e) {
            return false;
        }
    }

    private void put(ObjectKey key, PutBody body) throws IOException {
        if (stores.writesBack(false)) {
            folders.pending(key);
        }
        stores.put(key, body, false, flushTimeout);
    }

    /**
     * Deletes a key. A write of it still waiting for upload would land after the delete and bring the file back,
     * so a delete first waits (up to flush-timeout) for write-back to upload what it holds; EBUSY when it could not.
     */
    private void delete(ObjectKey key) throws IOException {
        if (stores.writes().stillPendingAfterFlush(key, flushTimeout)) {
            throw new Errnos.UploadPending(key + " is still waiting for its upload (write-back)");
        }
        reader.delete(key);
        folders.deleted(key);
    }

    /** After a write, rename or delete: the folders the key implies are real, and the path has a new version. */
    private void written(String path, ObjectKey key) {
        folders.written(key);
        reads.changed(path);
    }

    /** A file being written: a local spool, made one object at flush, fsync and the last close. */
    final class WriteHandle {
        private final String path;
        private final ObjectKey key;
        private final Path spool;
        private final FileChannel channel;
        private boolean dirty;
        private int refs = 1;

        private WriteHandle(String path, ObjectKey key, Path spool, FileChannel channel) {
            this.path = path;
            this.key = key;
            this.spool = spool;
            this.channel = channel;
        }

        private synchronized boolean retain() {
            if (refs == 0) {
                return false;
            }
            refs++;
            return true;
        }

        synchronized long size() throws IOException {
            return channel.isOpen() ? channel.size() : 0;
        }

        synchronized int read(ByteBuffer buf, long count, long offset) throws IOException {
            int lim = buf.limit();
            buf.limit((int) Math.min(lim, buf.position() + count));
            int total = 0;
            try {
                while (buf.hasRemaining()) {
                    int k = channel.read(buf, offset + total);
                    if (k <= 0) {
                        break;
                    }
                    total += k;
                }
            } finally {
                buf.limit(lim);
            }
            return total;
        }

        synchronized int write(ByteBuffer buf, long count, long offset) throws IOException {
            int lim = buf.limit();
            buf.limit((int) Math.min(lim, buf.position() + count));
            int total = 0;
            try {
                while (buf.hasRemaining()) {
                    total += channel.write(buf, offset + total);
                }
            } finally {
                buf.limit(lim);
            }
            dirty = true;
            return total;
        }

        synchronized void truncate(long size) throws IOException {
            long now = channel.size();
            if (size < now) {
                channel.truncate(size);
            } else if (size > now) {
                channel.write(ByteBuffer.allocate(1), size - 1);
            }
            dirty = true;
        }

        /** Makes the spool the object: journaled locally (write-back) or uploaded (write-through). */
        synchronized void commit() throws IOException {
            if (!dirty) {
                return;
            }
            put(key, PutBody.ofFile(spool));
            dirty = false;
            written(path, key);
        }

        /** Drops one reference; the last one commits what is left and removes the spool. */
        void release() throws IOException {
            synchronized (this) {
                if (--refs > 0) {
                    return;
                }
            }
            writing.remove(path, this);
            try {
                commit();
            } finally {
                synchronized (this) {
                    channel.close();
                    Files.deleteIfExists(spool);
                }
            }
        }
    }
}
