package dev.ferry.mount;

import static dev.ferry.mount.Errnos.EBADF;
import static dev.ferry.mount.Errnos.EEXIST;
import static dev.ferry.mount.Errnos.EINVAL;
import static dev.ferry.mount.Errnos.EISDIR;
import static dev.ferry.mount.Errnos.ENOENT;
import static dev.ferry.mount.Errnos.ENOSYS;
import static dev.ferry.mount.Errnos.ENOTEMPTY;
import static dev.ferry.mount.Errnos.EPERM;
import static dev.ferry.mount.Errnos.EROFS;

import dev.ferry.store.BucketOperations;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.time.Clock;
import dev.ferry.tier.NodeStores;
import dev.ferry.tier.TierHints;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.cryptomator.jfuse.api.DirFiller;
import org.cryptomator.jfuse.api.Errno;
import org.cryptomator.jfuse.api.FileInfo;
import org.cryptomator.jfuse.api.FuseConfig;
import org.cryptomator.jfuse.api.FuseConnInfo;
import org.cryptomator.jfuse.api.FuseOperations;
import org.cryptomator.jfuse.api.Stat;
import org.cryptomator.jfuse.api.Statvfs;
import org.cryptomator.jfuse.api.TimeSpec;

/**
 * The file system {@code ferry mount} serves: buckets as top-level folders, prefixes (delimiter {@code /}) as
 * folders, objects as files. This class answers libfuse and hands each operation to the part that owns it:
 * {@link Folders} (listings, folders), {@link Reads} (files open for reading, version-pinned), {@link Writes}
 * (files being written, truncate, delete, rename); a failure becomes an errno in one place, {@link Errnos}.
 *
 * <ul>
 *   <li><b>Listings are the metadata</b> ({@link FolderListings}): a file its folder's listing described is stat'ed and
 *       opened with no HEAD, at the listed size and ETag; a prefix is a folder on direct lookup.
 *   <li><b>Read-ahead</b> is the local tier's ({@link dev.ferry.cache.SequentialReadAhead}, attached by {@link Mount}):
 *       it sees the blocks every read asks for, whichever handle reads.
 *   <li><b>A read-only mount sends no OPEN, FLUSH or RELEASE</b> on a kernel that allows it ({@link #init}): the
 *       kernel opens files itself and keeps their pages; a file's reads return the version its last stat showed.
 *   <li><b>No local tier</b> ({@code cache-size 0}, over a ferry daemon): reads, pinned by ETag, go to the daemon,
 *       whose tier caches, reads ahead and prefetches by its jobs' plans; nothing is cached twice on one node.
 * </ul>
 * This class is the binding: it is driven without FUSE by the tests ({@code FsDriver}: libfuse's structs are
 * interfaces, held in memory there), the real-mount tests keep what only the kernel shows.
 *
 * <p>Thread-safe: libfuse calls from several threads; handles are a concurrent map, each guarded by its owner.
 */
final class FerryFs implements FuseOperations {
    private static final int O_ACCMODE = 3;
    private static final int O_TRUNC = 01000;

    /** A store call that may fail; see {@link #call}. */
    @FunctionalInterface
    private interface StoreCall {
        int run() throws IOException;
    }

    private final Errno errno;
    private final MountConfig config;
    private final Clock clock;
    private final TierHints hints;
    private final Attrs attrs;
    private final Folders folders;
    private final Reads reads;
    private final Writes writes;
    private final AtomicLong nextHandle = new AtomicLong(1);
    private final LongAdder flushes = new LongAdder();
    /** Open files: {@link Reads.Handle} or {@link Writes.Ref}. Folder handles are {@link Folders}'. */
    private final Map<Long, Object> handles = new ConcurrentHashMap<>();
    /** No OPEN reaches this mount: read-only, on a kernel that opens files itself (see {@link #init}). */
    private volatile boolean noOpen;
    private final LongAdder opens = new LongAdder();

    /**
     * Files are read and written through {@code stores}, the node's door; {@code clock} ages the listings and dates
     * the files being written.
     */
    FerryFs(Errno errno, MountConfig config, Clock clock, NodeStores stores, BucketOperations buckets, Path spoolDir,
            java.util.concurrent.Executor listers) throws IOException {
        this.errno = errno;
        this.config = config;
        this.clock = clock;
        this.hints = stores.hints();
        this.attrs = new Attrs(config.readOnly());
        this.folders = new Folders(stores.top(), clock, config.metadataTtl(), listers, buckets, stores.writes(), attrs);
        this.reads = new Reads(stores);
        this.writes = new Writes(stores, folders, reads, spoolDir, config.flushTimeout());
    }

    /** Reads of open files the kernel asked the mount for (its page cache held the rest). */
    long fileReads() {
        return reads.reads();
    }

    /** OPEN requests of files the kernel sent. */
    long opens() {
        return opens.sum();
    }

    /** FLUSH requests the kernel sent (a {@code close()} of a file open for reading sends none). */
    long flushes() {
        return flushes.sum();
    }

    /** See {@link Folders#probe}. */
    String probe() {
        return folders.probe();
    }

    /** Folders being listed now, ahead of a reader or for one. */
    int foldersBeingListed() {
        return folders.beingListed();
    }

    /** Runs {@code call}; a store failure becomes {@code -errno} (see {@link Errnos#fail}), naming {@code what} and {@code path}. */
    private static int call(String what, String path, StoreCall call) {
        try {
            return call.run();
        } catch (IOException e) {
            return Errnos.fail(what + " " + path, e);
        }
    }

    private long register(Object handle, FileInfo fi) {
        long id = nextHandle.getAndIncrement();
        handles.put(id, handle);
        fi.setFh(id);
        return id;
    }

    @Override
    public Errno errno() {
        return errno;
    }

    @Override
    public Set<Operation> supportedOperations() {
        return EnumSet.of(Operation.INIT, Operation.DESTROY, Operation.GET_ATTR, Operation.OPEN, Operation.READ, Operation.RELEASE,
                Operation.OPEN_DIR, Operation.READ_DIR, Operation.RELEASE_DIR, Operation.STATFS, Operation.CREATE, Operation.WRITE,
                Operation.FLUSH, Operation.FSYNC, Operation.TRUNCATE, Operation.UNLINK, Operation.MKDIR, Operation.RMDIR,
                Operation.RENAME, Operation.CHMOD, Operation.CHOWN, Operation.UTIMENS);
    }

    /** Asks the kernel for what the mount needs ({@link KernelOptions}); a read-only mount may then see no OPEN at all. */
    @Override
    public void init(FuseConnInfo conn, FuseConfig cfg) {
        if (KernelOptions.negotiate(conn, config)) {
            attrs.recordShown();
            noOpen = true;
        }
    }

    @Override
    public void destroy() {
        // the tiers are Mount's to close
    }

    // ---- attributes and folders -------------------------------------------------------------------------

    @Override
    public int getattr(String path, Stat stat, FileInfo fi) {
        MountPath loc = MountPath.parse(path);
        if (loc == null) {
            return -ENOENT;
        }
        return call("stat", path, () -> {
            if (loc.key() == null) {
                if (!loc.isRoot() && !folders.bucketExists(loc.bucket())) {
                    return -ENOENT;
                }
                attrs.dir(stat);
                return 0;
            }
            Writes.WriteHandle w = writes.writing(path);
            if (w != null) {
                attrs.file(stat, w.size(), clock.now());
                return 0;
            }
            FolderEntry listed = folders.listed(loc);
            if (listed != null && listed.meta() == null) {
                attrs.dir(stat);
                return 0;
            }
            try {
                ObjectMeta m = attrs.toShow(reads.described(loc, listed));
                attrs.file(stat, m);
                attrs.remember(m);
                return 0;
            } catch (ObjectNotFoundException notAFile) {
                attrs.forget(loc.object()); // a prefix, perhaps
            }
            if (folders.isDir(loc)) {
                attrs.dir(stat);
                return 0;
            }
            return -ENOENT;
        });
    }

    @Override
    public int statfs(String path, Statvfs statvfs) {
        long block = 4096;
        statvfs.setBsize(block);
        statvfs.setFrsize(block);
        statvfs.setBlocks(config.cacheSize() / block);
        long used = hints.residentBytes();
        long free = Math.max(0, config.cacheSize() - used) / block;
        statvfs.setBfree(free);
        statvfs.setBavail(free);
        statvfs.setNameMax(255);
        return 0;
    }

    @Override
    public int opendir(String path, FileInfo fi) {
        MountPath loc = MountPath.parse(path);
        if (loc == null) {
            return -ENOENT;
        }
        long id = nextHandle.getAndIncrement();
        folders.open(id, loc);
        fi.setFh(id);
        return 0;
    }

    @Override
    public int readdir(String path, DirFiller filler, long offset, FileInfo fi, int flags) {
        return call("list", path, () -> folders.read(fi.getFh(), filler, offset, flags));
    }

    @Override
    public int releasedir(String path, FileInfo fi) {
        folders.release(fi.getFh());
        return 0;
    }

    @Override
    public int mkdir(String path, int mode) {
        MountPath loc = MountPath.parse(path);
        if (config.readOnly()) {
            return -EROFS;
        }
        if (loc == null) {
            return -EINVAL;
        }
        if (loc.key() == null) {
            return -EPERM; // buckets are not created through the mount
        }
        return call("mkdir", path, () -> {
            if (writes.writing(path) != null || writes.exists(loc.object()) || folders.isDir(loc)) {
                return -EEXIST;
            }
            folders.makeLocal(loc);
            return 0;
        });
    }

    @Override
    public int rmdir(String path) {
        MountPath loc = MountPath.parse(path);
        if (config.readOnly()) {
            return -EROFS;
        }
        if (loc == null) {
            return -ENOENT;
        }
        if (loc.key() == null) {
            return -EPERM;
        }
        return call("rmdir", path, () -> {
            if (!folders.emptyInStore(loc)) {
                return -ENOTEMPTY;
            }
            return folders.removeLocal(loc) ? 0 : -ENOENT;
        });
    }

    // ---- files --------------------------------------------------------------------------------------------

    @Override
    public int open(String path, FileInfo fi) {
        MountPath loc = MountPath.parse(path);
        if (loc == null) {
            return -ENOENT;
        }
        if (loc.key() == null) {
            return -EISDIR;
        }
        if ((fi.getFlags() & O_ACCMODE) != 0) {
            if (config.readOnly()) {
                return -EROFS;
            }
            return openWrite(path, loc, (fi.getFlags() & O_TRUNC) != 0, false, fi);
        }
        Writes.Ref spooled = writes.openToRead(path);
        if (spooled != null) {
            register(spooled, fi);
            FileInfoBits.set(fi, false, true, true); // open to read: its close has nothing to flush
            return 0;
        }
        opens.increment();
        if (noOpen) {
            return -ENOSYS; // the kernel opens this file and every other itself from now on (see init)
        }
        return call("open", path, () -> {
            Reads.Handle h = reads.open(path, reads.versionToRead(loc, folders.listed(loc)));
            register(h, fi);
            FileInfoBits.set(fi, h.keepCache, h.directIo(), true);
            return 0;
        });
    }

    private int openWrite(String path, MountPath loc, boolean truncate, boolean create, FileInfo fi) {
        return call("open for writing", path, () -> {
            register(writes.open(path, loc, truncate, create), fi);
            FileInfoBits.set(fi, false, true, false); // its close() is where the write reaches the store
            return 0;
        });
    }

    @Override
    public int create(String path, int mode, FileInfo fi) {
        MountPath loc = MountPath.parse(path);
        if (config.readOnly()) {
            return -EROFS;
        }
        if (loc == null) {
            return -EINVAL;
        }
        if (loc.key() == null) {
            return -EPERM; // a file at the top level would be a bucket
        }
        return openWrite(path, loc, true, true, fi);
    }

    @Override
    public int read(String path, ByteBuffer buf, long count, long offset, FileInfo fi) {
        Object h = handles.get(fi.getFh());
        if (h == null && noOpen) {
            return call("read at " + offset + " of", path, () -> {
                MountPath loc = MountPath.parse(path);
                ObjectMeta m = attrs.shown(loc.object());
                if (m == null) { // forgotten past Attrs' bound
                    m = reads.described(loc, folders.listed(loc));
                    attrs.remember(m);
                }
                hints.listedIfUnknown(m); // a version the tier was not told of (a listing's): its read sends no HEAD
                return reads.read(Reads.atVersion(m), buf, count, offset);
            });
        }
        if (h instanceof Writes.Ref w) {
            return call("read", path, () -> w.handle().read(buf, count, offset));
        }
        if (!(h instanceof Reads.Handle r)) {
            return -EBADF;
        }
        return call("read at " + offset + " of", path, () -> reads.read(r, buf, count, offset));
    }

    @Override
    public int write(String path, ByteBuffer buf, long count, long offset, FileInfo fi) {
        if (!(handles.get(fi.getFh()) instanceof Writes.Ref w) || !w.canWrite()) {
            return -EBADF;
        }
        return call("write", path, () -> w.handle().write(buf, count, offset));
    }

    @Override
    public int flush(String path, FileInfo fi) {
        flushes.increment();
        if (noOpen) {
            return -ENOSYS; // the kernel sends no FLUSH from now on: a read-only mount has nothing to flush
        }
        return commit(path, fi);
    }

    @Override
    public int fsync(String path, int datasync, FileInfo fi) {
        return commit(path, fi);
    }

    private int commit(String path, FileInfo fi) {
        if (handles.get(fi.getFh()) instanceof Writes.Ref w && w.canWrite()) {
            return call("write to the store", path, () -> {
                w.handle().commit();
                return 0;
            });
        }
        return 0;
    }

    @Override
    public int release(String path, FileInfo fi) {
        Object h = handles.remove(fi.getFh());
        if (h instanceof Reads.Handle r) {
            reads.release(r);
        } else if (h instanceof Writes.Ref w) {
            return call("close", path, () -> {
                w.handle().release();
                return 0;
            });
        }
        return 0;
    }

    @Override
    public int truncate(String path, long size, FileInfo fi) {
        if (config.readOnly()) {
            return -EROFS;
        }
        MountPath loc = MountPath.parse(path);
        if (loc == null || loc.key() == null) {
            return loc == null ? -ENOENT : -EISDIR;
        }
        Writes.Ref ref = fi != null && handles.get(fi.getFh()) instanceof Writes.Ref r ? r : null;
        return call("truncate", path, () -> writes.truncate(path, loc, size, ref));
    }

    @Override
    public int unlink(String path) {
        if (config.readOnly()) {
            return -EROFS;
        }
        MountPath loc = MountPath.parse(path);
        if (loc == null) {
            return -ENOENT;
        }
        if (loc.key() == null) {
            return -EISDIR;
        }
        return call("delete", path, () -> writes.unlink(path, loc));
    }

    /** See {@link Writes#rename}; RENAME_NOREPLACE/RENAME_EXCHANGE are refused with EINVAL, buckets with EPERM. */
    @Override
    public int rename(String oldpath, String newpath, int flags) {
        if (config.readOnly()) {
            return -EROFS;
        }
        if (flags != 0) {
            return -EINVAL;
        }
        MountPath from = MountPath.parse(oldpath);
        MountPath to = MountPath.parse(newpath);
        if (from == null) {
            return -ENOENT;
        }
        if (to == null) {
            return -EINVAL;
        }
        if (from.key() == null || to.key() == null) {
            return -EPERM; // buckets are not renamed or created through the mount
        }
        return call("rename " + oldpath + " to", newpath, () -> writes.rename(oldpath, newpath, from, to));
    }

    // Objects carry no owner, mode or times beyond their last-modified time: these succeed and change nothing,
    // so cp -p, touch and tar work; read-only mounts refuse them.
    @Override
    public int chmod(String path, int mode, FileInfo fi) {
        return config.readOnly() ? -EROFS : 0;
    }

    @Override
    public int chown(String path, int uid, int gid, FileInfo fi) {
        return config.readOnly() ? -EROFS : 0;
    }

    @Override
    public int utimens(String path, TimeSpec atime, TimeSpec mtime, FileInfo fi) {
        return config.readOnly() ? -EROFS : 0;
    }
}
