package dev.ferry.mount;

import dev.ferry.cache.CachingStore;
import dev.ferry.store.BucketOperations;
import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.writeback.WriteBackStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.cryptomator.jfuse.api.DirFiller;
import org.cryptomator.jfuse.api.Errno;
import org.cryptomator.jfuse.api.FileInfo;
import org.cryptomator.jfuse.api.FuseConfig;
import org.cryptomator.jfuse.api.FuseConnInfo;
import org.cryptomator.jfuse.api.FuseOperations;
import org.cryptomator.jfuse.api.Stat;
import org.cryptomator.jfuse.api.Statvfs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file system {@code ferry mount} serves: buckets as top-level folders, prefixes (delimiter {@code /}) as
 * folders, objects as files.
 *
 * <p>Design notes.
 * <ul>
 *   <li><b>Reads</b> go through the local tier, pinned: {@code open} takes the object's current ETag, and every
 *       read of that handle names it ({@code If-Match}), so its bytes never change under it; when the store holds a
 *       newer version and the pinned one is no longer on local disk the read fails with ESTALE.
 *   <li><b>The kernel page cache</b> is per path, not per version, so {@code open} tells the kernel to keep it
 *       ({@code keep_cache}) only when the version opened is the one whose pages it may hold; a new version drops
 *       them; while handles of the old version are still open, a new version's handle bypasses the page cache
 *       ({@code direct_io}), so neither sees the other's pages.
 *   <li><b>Read-ahead</b> is the local tier's ({@link dev.ferry.cache.SequentialReadAhead}, attached by {@link Mount}):
 *       it sees the blocks every read asks for, whichever handle reads.
 *   <li><b>No local tier</b> ({@code cache-size 0}, over a ferry daemon): reads, pinned by ETag, go to the daemon,
 *       whose tier caches, reads ahead and prefetches by its jobs' plans; nothing is cached twice on one node.
 *   <li><b>Listings</b> are paged as the store pages them (ListObjectsV2, 1,000 keys): {@code readdir} returns
 *       entries with offsets, and a folder handle holds one page at a time.
 *   <li><b>Writes</b> are spooled to a local file and become one object at {@code flush} (every close) or
 *       {@code fsync}: through write-back (journaled locally, uploaded in the background) or, with
 *       {@code write-through}, uploaded before close returns. S3 has no partial writes: a file opened for writing
 *       without {@code O_TRUNC} is first copied to the spool, and the whole object is replaced.
 * </ul>
 * Thread-safe: libfuse calls from several threads; per-handle state is guarded by the handle.
 */
final class FerryFs implements FuseOperations {
    private static final Logger LOG = LoggerFactory.getLogger(FerryFs.class);

    // Linux errno values jfuse's Errno does not name
    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int EIO = 5;
    static final int EBADF = 9;
    static final int EACCES = 13;
    static final int EBUSY = 16;
    static final int EEXIST = 17;
    static final int EXDEV = 18;
    static final int EISDIR = 21;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int EROFS = 30;
    static final int ENOTEMPTY = 39;
    static final int EOPNOTSUPP = 95;
    static final int ESTALE = 116;

    private static final int O_ACCMODE = 3;
    private static final int O_TRUNC = 01000;

    private final Errno errno;
    private final MountConfig config;
    private final ObjectStore tier;
    private final CachingStore cache; // null: no local tier
    private final WriteBackStore writeBack;
    private final ObjectStore reader;
    private final BucketOperations buckets;
    private final Path spoolDir;
    private final int uid;
    private final int gid;
    private final AtomicLong nextHandle = new AtomicLong(1);
    private final Map<Long, Object> handles = new ConcurrentHashMap<>();
    private final Map<String, WriteHandle> writing = new ConcurrentHashMap<>();
    private final Map<Long, DirCursor> dirs = new ConcurrentHashMap<>();
    private final Set<String> localDirs = ConcurrentHashMap.newKeySet();
    /** "bucket/key" of files written through write-back and perhaps not uploaded yet: listings show them. */
    private final java.util.NavigableSet<String> pendingWrites = new java.util.concurrent.ConcurrentSkipListSet<>();
    private final Map<String, PageState> pages = new ConcurrentHashMap<>();
    private volatile List<String> bucketNames;
    private volatile long bucketNamesAt;

    /**
     * {@code tier} is the store under write-back (the local tier, or with none the chain to the store);
     * {@code cache} the local tier or null; {@code writeBack} null with write-through.
     */
    FerryFs(Errno errno, MountConfig config, ObjectStore tier, CachingStore cache, WriteBackStore writeBack, BucketOperations buckets,
            Path spoolDir) throws IOException {
        this.errno = errno;
        this.config = config;
        this.tier = tier;
        this.cache = cache;
        this.writeBack = writeBack;
        this.reader = writeBack != null ? writeBack : tier;
        this.buckets = buckets;
        this.spoolDir = spoolDir;
        this.uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        this.gid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:gid");
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

    @Override
    public void init(FuseConnInfo conn, FuseConfig cfg) {
        // O_TRUNC arrives with open (one whole-object replacement), not as a separate truncate to zero first
        conn.setWant(conn.want() | (conn.capable() & FuseConnInfo.FUSE_CAP_ATOMIC_O_TRUNC));
        // the kernel keeps or drops a file's pages when it is opened, by version (see open); dropping them whenever a
        // stat shows a new mtime would also drop the pages a handle of the old version still reads
        conn.setWant(conn.want() & ~FuseConnInfo.FUSE_CAP_AUTO_INVAL_DATA);
        conn.setMaxWrite(1 << 20);
    }

    @Override
    public void destroy() {
        // the tiers are Mount's to close
    }

    // ---- paths ------------------------------------------------------------------------------------------

    /** A path in the mount: the root, a bucket, or a key (a file or a prefix) in a bucket. */
    record Loc(String bucket, String key) {
        static Loc parse(String path) {
            if (path == null || path.equals("/") || path.isEmpty()) {
                return new Loc(null, null);
            }
            String p = path.startsWith("/") ? path.substring(1) : path;
            int slash = p.indexOf('/');
            String bucket = slash < 0 ? p : p.substring(0, slash);
            String key = slash < 0 || slash == p.length() - 1 ? null : p.substring(slash + 1);
            try {
                ObjectKey.validateBucket(bucket);
                if (key != null) {
                    ObjectKey.of(bucket, key);
                }
            } catch (IllegalArgumentException invalid) {
                return null; // a name no bucket or key can have: it does not exist
            }
            return new Loc(bucket, key);
        }

        boolean isRoot() {
            return bucket == null;
        }

        ObjectKey object() {
            return ObjectKey.of(bucket, key);
        }

        String prefix() {
            return key == null ? "" : key + "/";
        }
    }

    // ---- attributes -------------------------------------------------------------------------------------

    private void dirStat(Stat stat) {
        stat.setMode(Stat.S_IFDIR | (config.readOnly() ? 0555 : 0755));
        stat.setNLink((short) 2);
        stat.setUid(uid);
        stat.setGid(gid);
        stat.setSize(4096);
    }

    private void fileStat(Stat stat, long size, Instant modified) {
        stat.setMode(Stat.S_IFREG | (config.readOnly() ? 0444 : 0644));
        stat.setNLink((short) 1);
        stat.setUid(uid);
        stat.setGid(gid);
        stat.setSize(size);
        stat.mTime().set(modified);
        stat.cTime().set(modified);
        stat.aTime().set(modified);
    }

    @Override
    public int getattr(String path, Stat stat, FileInfo fi) {
        Loc loc = Loc.parse(path);
        if (loc == null) {
            return -ENOENT;
        }
        try {
            if (loc.isRoot()) {
                dirStat(stat);
                return 0;
            }
            if (loc.key() == null) {
                if (!bucketExists(loc.bucket())) {
                    return -ENOENT;
                }
                dirStat(stat);
                return 0;
            }
            WriteHandle w = writing.get(path);
            if (w != null) {
                fileStat(stat, w.size(), Instant.now());
                return 0;
            }
            try {
                ObjectMeta m = reader.head(loc.object());
                fileStat(stat, m.size(), m.lastModified());
                return 0;
            } catch (ObjectNotFoundException notAFile) {
                // a prefix, perhaps
            }
            if (isDir(loc)) {
                dirStat(stat);
                return 0;
            }
            return -ENOENT;
        } catch (IOException e) {
            return -errnoOf("stat " + path, e);
        }
    }

    private boolean bucketExists(String bucket) throws IOException {
        long now = System.nanoTime();
        List<String> names = bucketNames;
        if (names == null || now - bucketNamesAt > 2_000_000_000L || !names.contains(bucket)) {
            names = buckets.listBuckets().stream().map(BucketOperations.Bucket::name).toList();
            bucketNames = names;
            bucketNamesAt = now;
        }
        return names.contains(bucket);
    }

    private boolean isDir(Loc loc) throws IOException {
        if (loc.key() == null) {
            return loc.isRoot() || bucketExists(loc.bucket());
        }
        if (localDirs.contains(loc.bucket() + "/" + loc.key())) {
            return true;
        }
        if (!pendingUnder(loc.bucket(), loc.prefix()).isEmpty()) {
            return true;
        }
        ListPage page = reader.list(new ListRequest(loc.bucket(), loc.prefix(), "/", null, 1));
        return !page.objects().isEmpty() || !page.commonPrefixes().isEmpty();
    }

    /** Keys under {@code prefix} written here and still held locally by write-back (dropping those uploaded since). */
    private List<ObjectKey> pendingUnder(String bucket, String prefix) {
        if (writeBack == null) {
            return List.of();
        }
        String from = bucket + "/" + prefix;
        List<ObjectKey> keys = new ArrayList<>();
        for (String k : pendingWrites.subSet(from, true, from + Character.MAX_VALUE, false)) {
            ObjectKey key = ObjectKey.of(bucket, k.substring(bucket.length() + 1));
            if (writeBack.holdsLocally(key)) {
                keys.add(key);
            } else {
                pendingWrites.remove(k); // uploaded: the store lists it now
            }
        }
        return keys;
    }

    @Override
    public int statfs(String path, Statvfs statvfs) {
        long block = 4096;
        statvfs.setBsize(block);
        statvfs.setFrsize(block);
        statvfs.setBlocks(config.cacheSize() / block);
        long used = cache == null ? 0 : cache.stats().residentBytes();
        long free = Math.max(0, config.cacheSize() - used) / block;
        statvfs.setBfree(free);
        statvfs.setBavail(free);
        statvfs.setNameMax(255);
        return 0;
    }

    // ---- folders ----------------------------------------------------------------------------------------

    /** An entry of a listing: a file (with its metadata) or a folder (meta null). */
    private record Entry(String name, ObjectMeta meta) {
    }

    /** A folder handle: the listing page it is in, and the token of the next; one page in memory at a time. */
    private final class DirCursor {
        final Loc loc;
        List<Entry> page = List.of();
        long pageStart;
        String token;
        boolean started;
        boolean last;
        /** Children that exist only as local writes so far: shown after the store's last page unless it listed them. */
        Map<String, ObjectKey> pending = new java.util.TreeMap<>();

        DirCursor(Loc loc) {
            this.loc = loc;
        }

        void reset() {
            pending = new java.util.TreeMap<>();
            if (!loc.isRoot()) {
                for (ObjectKey k : pendingUnder(loc.bucket(), loc.prefix())) {
                    String rest = k.key().substring(loc.prefix().length());
                    int slash = rest.indexOf('/');
                    pending.put(slash < 0 ? rest : rest.substring(0, slash), slash < 0 ? k : null);
                }
            }
            page = List.of();
            pageStart = 0;
            token = null;
            started = false;
            last = false;
        }

        /** Loads the next page; false when there is none. */
        boolean next() throws IOException {
            if (last) {
                return false;
            }
            pageStart += page.size();
            List<Entry> entries = new ArrayList<>();
            if (loc.isRoot()) {
                for (String b : buckets.listBuckets().stream().map(BucketOperations.Bucket::name).toList()) {
                    entries.add(new Entry(b, null));
                }
                last = true;
            } else {
                ListPage p = reader.list(new ListRequest(loc.bucket(), loc.prefix(), "/", token, ListRequest.DEFAULT_MAX_KEYS));
                String prefix = loc.prefix();
                for (String cp : p.commonPrefixes()) {
                    String name = cp.substring(prefix.length(), cp.length() - 1);
                    if (usable(name)) {
                        pending.remove(name);
                        entries.add(new Entry(name, null));
                        localDirs.remove(loc.bucket() + "/" + cp.substring(0, cp.length() - 1));
                    }
                }
                for (ObjectMeta m : p.objects()) {
                    String name = m.key().key().substring(prefix.length());
                    if (usable(name)) {
                        pending.remove(name);
                        entries.add(new Entry(name, m));
                    }
                }
                token = p.nextToken();
                last = token == null;
                if (last) {
                    for (Map.Entry<String, ObjectKey> w : pending.entrySet()) {
                        if (w.getValue() == null) {
                            entries.add(new Entry(w.getKey(), null));
                            localDirs.remove(loc.bucket() + "/" + prefix + w.getKey());
                        } else {
                            try {
                                entries.add(new Entry(w.getKey(), reader.head(w.getValue())));
                            } catch (ObjectNotFoundException gone) {
                                // deleted since
                            }
                        }
                    }
                    String mine = loc.bucket() + "/" + prefix;
                    for (String d : localDirs) {
                        if (d.startsWith(mine) && d.indexOf('/', mine.length()) < 0) {
                            entries.add(new Entry(d.substring(mine.length()), null));
                        }
                    }
                }
            }
            started = true;
            page = entries;
            return true;
        }

        private boolean usable(String name) {
            return !name.isEmpty() && !name.equals(".") && !name.equals("..") && name.indexOf('/') < 0;
        }
    }

    @Override
    public int opendir(String path, FileInfo fi) {
        Loc loc = Loc.parse(path);
        if (loc == null) {
            return -ENOENT;
        }
        long id = nextHandle.getAndIncrement();
        dirs.put(id, new DirCursor(loc));
        fi.setFh(id);
        return 0;
    }

    @Override
    public int readdir(String path, DirFiller filler, long offset, FileInfo fi, int flags) {
        DirCursor c = dirs.get(fi.getFh());
        if (c == null) {
            return -EBADF;
        }
        int plus = (flags & FUSE_READDIR_PLUS) != 0 ? DirFiller.FUSE_FILL_DIR_PLUS : 0;
        synchronized (c) {
            try {
                long off = offset;
                if (off == 0) {
                    if (filler.fill(".", this::dirStat, 1, 0) != 0) {
                        return 0;
                    }
                    off = 1;
                }
                if (off == 1) {
                    if (filler.fill("..", this::dirStat, 2, 0) != 0) {
                        return 0;
                    }
                    off = 2;
                }
                long index = off - 2; // entries of the listing already returned
                if (index < c.pageStart || !c.started) {
                    c.reset();
                    if (!c.next()) {
                        return 0;
                    }
                }
                while (true) {
                    while (index >= c.pageStart + c.page.size()) {
                        if (!c.next()) {
                            return 0;
                        }
                    }
                    Entry e = c.page.get((int) (index - c.pageStart));
                    int r = filler.fill(e.name(), st -> {
                        if (e.meta() == null) {
                            dirStat(st);
                        } else {
                            fileStat(st, e.meta().size(), e.meta().lastModified());
                        }
                    }, index + 3, plus);
                    if (r != 0) {
                        return 0; // the kernel's buffer is full; it asks again from index + 3
                    }
                    index++;
                }
            } catch (IOException e) {
                return -errnoOf("list " + path, e);
            }
        }
    }

    @Override
    public int releasedir(String path, FileInfo fi) {
        dirs.remove(fi.getFh());
        return 0;
    }

    @Override
    public int mkdir(String path, int mode) {
        Loc loc = Loc.parse(path);
        if (config.readOnly()) {
            return -EROFS;
        }
        if (loc == null) {
            return -EINVAL;
        }
        if (loc.key() == null) {
            return -EPERM; // buckets are not created through the mount
        }
        try {
            if (writing.containsKey(path) || exists(loc.object()) || isDir(loc)) {
                return -EEXIST;
            }
        } catch (IOException e) {
            return -errnoOf("mkdir " + path, e);
        }
        localDirs.add(loc.bucket() + "/" + loc.key());
        return 0;
    }

    @Override
    public int rmdir(String path) {
        Loc loc = Loc.parse(path);
        if (config.readOnly()) {
            return -EROFS;
        }
        if (loc == null) {
            return -ENOENT;
        }
        if (loc.key() == null) {
            return -EPERM;
        }
        try {
            ListPage page = reader.list(new ListRequest(loc.bucket(), loc.prefix(), "/", null, 1));
            if (!page.objects().isEmpty() || !page.commonPrefixes().isEmpty()) {
                return -ENOTEMPTY;
            }
        } catch (IOException e) {
            return -errnoOf("rmdir " + path, e);
        }
        return localDirs.remove(loc.bucket() + "/" + loc.key()) ? 0 : -ENOENT;
    }

    private boolean exists(ObjectKey key) throws IOException {
        try {
            reader.head(key);
            return true;
        } catch (ObjectNotFoundException e) {
            return false;
        }
    }

    // ---- reading ----------------------------------------------------------------------------------------

    /** Which version's pages the kernel may hold for a path, and how many handles of it are open. */
    private static final class PageState {
        String etag;
        int open;
    }

    /** A file opened for reading, pinned to the version it opened. */
    private static final class ReadHandle {
        final String path;
        final ObjectMeta meta;
        final PageState pages; // null: this handle bypasses the page cache
        final CachingStore.VersionPin pin; // keeps this version's blocks in the local tier while open; null: no tier

        ReadHandle(String path, ObjectMeta meta, PageState pages, CachingStore.VersionPin pin) {
            this.path = path;
            this.meta = meta;
            this.pages = pages;
            this.pin = pin;
        }
    }

    /** A handle on a file being written: the writer's, or a reader's of the same path (both read the spool). */
    private record WriteRef(WriteHandle handle, boolean canWrite) {
    }

    @Override
    public int open(String path, FileInfo fi) {
        Loc loc = Loc.parse(path);
        if (loc == null) {
            return -ENOENT;
        }
        if (loc.key() == null) {
            return -EISDIR;
        }
        int access = fi.getFlags() & O_ACCMODE;
        if (access != 0) {
            if (config.readOnly()) {
                return -EROFS;
            }
            return openWrite(path, loc, (fi.getFlags() & O_TRUNC) != 0, false, fi);
        }
        WriteHandle w = writing.get(path);
        if (w != null && w.retain()) {
            long id = nextHandle.getAndIncrement();
            handles.put(id, new WriteRef(w, false));
            fi.setFh(id);
            FileInfoBits.set(fi, false, true);
            return 0;
        }
        ObjectMeta meta;
        try {
            meta = reader.head(loc.object());
        } catch (ObjectNotFoundException e) {
            return -ENOENT;
        } catch (IOException e) {
            return -errnoOf("open " + path, e);
        }
        boolean keep = false;
        PageState state;
        synchronized (pages) {
            state = pages.computeIfAbsent(path, p -> new PageState());
            if (meta.etag().equals(state.etag)) {
                keep = true; // the kernel's pages are this version's
                state.open++;
            } else if (state.open == 0) {
                state.etag = meta.etag(); // keep_cache off: the kernel drops the old version's pages
                state.open++;
            } else {
                state = null; // handles of another version read through the page cache: bypass it
            }
        }
        long id = nextHandle.getAndIncrement();
        handles.put(id, new ReadHandle(path, meta, state, cache == null ? null : cache.pinVersion(meta)));
        fi.setFh(id);
        // a bypassing handle keeps the cache too: an open without keep_cache drops the inode's pages, the old version's
        FileInfoBits.set(fi, keep || state == null, state == null);
        return 0;
    }

    @Override
    public int read(String path, ByteBuffer buf, long count, long offset, FileInfo fi) {
        Object h = handles.get(fi.getFh());
        if (h instanceof WriteRef w) {
            try {
                return w.handle().read(buf, count, offset);
            } catch (IOException e) {
                return -errnoOf("read " + path, e);
            }
        }
        if (!(h instanceof ReadHandle r)) {
            return -EBADF;
        }
        long size = r.meta.size();
        if (offset >= size || count <= 0) {
            return 0;
        }
        int n = (int) Math.min(Math.min(count, buf.remaining()), size - offset);
        GetRequest request = new GetRequest(r.meta.key(), ByteRange.of(offset, n), r.meta.etag());
        try {
            int got = readResident(request, buf);
            if (got < 0) {
                got = readThrough(request, buf, n);
            }
            return got;
        } catch (IOException e) {
            return -errnoOf("read " + path + " at " + offset, e);
        }
    }

    /** Reads straight from the block files when every block is on local disk; -1 when not. */
    private int readResident(GetRequest request, ByteBuffer buf) throws IOException {
        if (cache == null || (writeBack != null && writeBack.holdsLocally(request.key()))) {
            return -1;
        }
        CachingStore.ResidentRead resident = cache.openResident(request);
        if (resident == null) {
            return -1;
        }
        try (resident) {
            int total = 0;
            for (CachingStore.FileRegion region : resident.regions()) {
                long pos = region.position();
                long left = region.length();
                while (left > 0) {
                    int lim = buf.limit();
                    buf.limit((int) Math.min(lim, buf.position() + left));
                    int k = region.channel().read(buf, pos);
                    buf.limit(lim);
                    if (k <= 0) {
                        throw new IOException("a cached block of " + request.key() + " ended early");
                    }
                    pos += k;
                    left -= k;
                    total += k;
                }
            }
            return total;
        }
    }

    private static final ThreadLocal<byte[]> COPY = ThreadLocal.withInitial(() -> new byte[256 * 1024]);

    private int readThrough(GetRequest request, ByteBuffer buf, int n) throws IOException {
        byte[] tmp = COPY.get();
        int total = 0;
        try (ObjectContent content = reader.get(request); InputStream in = content.stream()) {
            while (total < n) {
                int k = in.read(tmp, 0, Math.min(tmp.length, n - total));
                if (k < 0) {
                    break;
                }
                buf.put(tmp, 0, k);
                total += k;
            }
        }
        return total;
    }

    @Override
    public int release(String path, FileInfo fi) {
        Object h = handles.remove(fi.getFh());
        if (h instanceof ReadHandle r) {
            if (r.pin != null) {
                r.pin.close();
            }
            if (r.pages != null) {
                synchronized (pages) {
                    r.pages.open--;
                }
            }
        } else if (h instanceof WriteRef w) {
            try {
                w.handle().release();
            } catch (IOException e) {
                return -errnoOf("close " + path, e);
            }
        }
        return 0;
    }

    // ---- writing ----------------------------------------------------------------------------------------

    /** A file being written: a local spool, made one object at flush, fsync and the last close. */
    private final class WriteHandle {
        final String path;
        final ObjectKey key;
        final Path spool;
        final FileChannel channel;
        boolean dirty;
        int refs = 1;

        WriteHandle(String path, ObjectKey key, Path spool, FileChannel channel) {
            this.path = path;
            this.key = key;
            this.spool = spool;
            this.channel = channel;
        }

        synchronized boolean retain() {
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
            PutBody body = PutBody.ofFile(spool);
            put(key, body);
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

    /** After a write, rename or delete: drop local folders the key now implies, and the kernel's pages of the path. */
    private void written(String path, ObjectKey key) {
        String k = key.key();
        for (int i = k.indexOf('/'); i >= 0; i = k.indexOf('/', i + 1)) {
            localDirs.remove(key.bucket() + "/" + k.substring(0, i));
        }
        synchronized (pages) {
            PageState s = pages.get(path);
            if (s != null) {
                s.etag = null; // the next open is a new version: keep_cache off (or direct_io while old handles read)
                if (s.open == 0) {
                    pages.remove(path);
                }
            }
        }
    }

    private int openWrite(String path, Loc loc, boolean truncate, boolean create, FileInfo fi) {
        try {
            WriteHandle existing = writing.get(path);
            if (existing != null && existing.retain()) {
                if (truncate) {
                    existing.truncate(0);
                }
                long id = nextHandle.getAndIncrement();
                handles.put(id, new WriteRef(existing, true));
                fi.setFh(id);
                FileInfoBits.set(fi, false, true);
                return 0;
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
            long id = nextHandle.getAndIncrement();
            handles.put(id, new WriteRef(w, true));
            fi.setFh(id);
            FileInfoBits.set(fi, false, true);
            return 0;
        } catch (ObjectNotFoundException e) {
            return -ENOENT;
        } catch (IOException e) {
            return -errnoOf("open for writing " + path, e);
        }
    }

    @Override
    public int create(String path, int mode, FileInfo fi) {
        Loc loc = Loc.parse(path);
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
    public int write(String path, ByteBuffer buf, long count, long offset, FileInfo fi) {
        Object h = handles.get(fi.getFh());
        if (!(h instanceof WriteRef w) || !w.canWrite()) {
            return -EBADF;
        }
        try {
            return w.handle().write(buf, count, offset);
        } catch (IOException e) {
            return -errnoOf("write " + path, e);
        }
    }

    @Override
    public int flush(String path, FileInfo fi) {
        return commit(path, fi);
    }

    @Override
    public int fsync(String path, int datasync, FileInfo fi) {
        return commit(path, fi);
    }

    private int commit(String path, FileInfo fi) {
        if (handles.get(fi.getFh()) instanceof WriteRef w && w.canWrite()) {
            try {
                w.handle().commit();
            } catch (IOException e) {
                return -errnoOf("write " + path + " to the store", e);
            }
        }
        return 0;
    }

    @Override
    public int truncate(String path, long size, FileInfo fi) {
        if (config.readOnly()) {
            return -EROFS;
        }
        Loc loc = Loc.parse(path);
        if (loc == null || loc.key() == null) {
            return loc == null ? -ENOENT : -EISDIR;
        }
        try {
            WriteHandle w = fi != null && handles.get(fi.getFh()) instanceof WriteRef ref ? ref.handle() : writing.get(path);
            if (w != null) {
                w.truncate(size);
                return 0;
            }
            ObjectMeta meta = reader.head(loc.object());
            if (size == meta.size()) {
                return 0;
            }
            if (size != 0) {
                return -EOPNOTSUPP; // a partial rewrite of an object not open here; open it for writing instead
            }
            put(loc.object(), PutBody.ofBytes(new byte[0]));
            written(path, loc.object());
            return 0;
        } catch (IOException e) {
            return -errnoOf("truncate " + path, e);
        }
    }

    private void put(ObjectKey key, PutBody body) throws IOException {
        if (writeBack != null) {
            pendingWrites.add(key.bucket() + "/" + key.key());
            writeBack.write(key, body);
        } else {
            tier.put(key, body);
        }
    }

    /**
     * Deletes a key. A write of it still waiting for upload would land after the delete and bring the file back,
     * so a delete first waits (up to flush-timeout) for write-back to upload what it holds; EBUSY when it could not.
     */
    private void delete(ObjectKey key) throws IOException {
        if (writeBack != null && writeBack.holdsLocally(key)) {
            writeBack.flush(config.flushTimeout());
            if (writeBack.holdsLocally(key)) {
                throw new UploadPending(key + " is still waiting for its upload (write-back)");
            }
        }
        reader.delete(key);
        pendingWrites.remove(key.bucket() + "/" + key.key());
    }

    @Override
    public int unlink(String path) {
        if (config.readOnly()) {
            return -EROFS;
        }
        Loc loc = Loc.parse(path);
        if (loc == null) {
            return -ENOENT;
        }
        if (loc.key() == null) {
            return -EISDIR;
        }
        try {
            if (!exists(loc.object())) {
                return -ENOENT;
            }
            delete(loc.object());
            written(path, loc.object());
            return 0;
        } catch (IOException e) {
            return -errnoOf("delete " + path, e);
        }
    }

    /**
     * A file is renamed by copying it to the new key and deleting the old one (S3 has no rename): not atomic, and
     * it costs a read and a write of the bytes. A folder is refused with EXDEV, which {@code mv} answers by copying
     * file by file; RENAME_NOREPLACE/RENAME_EXCHANGE are refused with EINVAL.
     */
    @Override
    public int rename(String oldpath, String newpath, int flags) {
        if (config.readOnly()) {
            return -EROFS;
        }
        if (flags != 0) {
            return -EINVAL;
        }
        Loc from = Loc.parse(oldpath);
        Loc to = Loc.parse(newpath);
        if (from == null) {
            return -ENOENT;
        }
        if (to == null) {
            return -EINVAL;
        }
        if (from.key() == null || to.key() == null) {
            return -EPERM; // buckets are not renamed or created through the mount
        }
        try {
            WriteHandle w = writing.get(oldpath);
            if (w != null) {
                w.commit();
            }
            ObjectMeta meta;
            try {
                meta = reader.head(from.object());
            } catch (ObjectNotFoundException e) {
                return isDir(from) ? -EXDEV : -ENOENT;
            }
            if (isDir(to) && !exists(to.object())) {
                return -EISDIR;
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
        } catch (IOException e) {
            return -errnoOf("rename " + oldpath + " to " + newpath, e);
        }
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
    public int utimens(String path, org.cryptomator.jfuse.api.TimeSpec atime, org.cryptomator.jfuse.api.TimeSpec mtime, FileInfo fi) {
        return config.readOnly() ? -EROFS : 0;
    }

    /** A delete refused because the key's write has not reached the store yet (EBUSY). */
    static final class UploadPending extends IOException {
        private static final long serialVersionUID = 1L;

        UploadPending(String message) {
            super(message);
        }
    }

    // ---- errors -----------------------------------------------------------------------------------------

    /** The errno of a store failure: not found ENOENT, a pinned version gone ESTALE, refused EACCES, full ENOSPC, else EIO. */
    static int errnoOf(IOException e) {
        if (e instanceof ObjectNotFoundException) {
            return ENOENT;
        }
        if (e instanceof UploadPending) {
            return EBUSY;
        }
        if (e instanceof StoreException se) {
            if (se.kind() == StoreException.Kind.PRECONDITION_FAILED || se.httpStatus() == 412) {
                return ESTALE;
            }
            if (se.kind() == StoreException.Kind.ACCESS_DENIED) {
                return EACCES;
            }
            if (se.httpStatus() == 507) {
                return ENOSPC;
            }
            if (se.kind() == StoreException.Kind.NOT_FOUND) {
                return ENOENT;
            }
        }
        return EIO;
    }

    private static int errnoOf(String what, IOException e) {
        int code = errnoOf(e);
        if (code == EIO || code == ESTALE || code == EBUSY) {
            LOG.warn("{}: {}", what, e.getMessage());
        }
        return code;
    }
}
