package dev.ferry.mount;

import dev.ferry.store.BucketOperations;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.writeback.WriteBackStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import org.cryptomator.jfuse.api.DirFiller;
import org.cryptomator.jfuse.api.FuseOperations;

/**
 * The mount's folders: buckets at the top, prefixes (delimiter {@code /}) below. Listings are paged as the store
 * pages them (ListObjectsV2, 1,000 keys): {@code readdir} returns entries with offsets, and a folder handle holds
 * one page at a time. Two kinds of folder exist only here: those made with {@code mkdir} (S3 has no empty folders;
 * one lasts until a file is written under it) and those implied by files written through write-back and not
 * uploaded yet, which listings show too.
 *
 * <p>Thread-safe: concurrent sets; a folder handle is guarded by itself.
 */
final class Folders {
    private final ObjectStore reader;
    private final BucketOperations buckets;
    private final WriteBackStore writeBack;
    private final Attrs attrs;
    private final Map<Long, DirCursor> dirs = new ConcurrentHashMap<>();
    /** "bucket/key" of folders made with mkdir. */
    private final Set<String> localDirs = ConcurrentHashMap.newKeySet();
    /** "bucket/key" of files written through write-back and perhaps not uploaded yet: listings show them. */
    private final NavigableSet<String> pendingWrites = new ConcurrentSkipListSet<>();
    private volatile List<String> bucketNames;
    private volatile long bucketNamesAt;

    Folders(ObjectStore reader, BucketOperations buckets, WriteBackStore writeBack, Attrs attrs) {
        this.reader = reader;
        this.buckets = buckets;
        this.writeBack = writeBack;
        this.attrs = attrs;
    }

    boolean bucketExists(String bucket) throws IOException {
        long now = System.nanoTime();
        List<String> names = bucketNames;
        if (names == null || now - bucketNamesAt > 2_000_000_000L || !names.contains(bucket)) {
            names = buckets.listBuckets().stream().map(BucketOperations.Bucket::name).toList();
            bucketNames = names;
            bucketNamesAt = now;
        }
        return names.contains(bucket);
    }

    boolean isDir(Loc loc) throws IOException {
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

    /** True when the store lists nothing under the folder. */
    boolean emptyInStore(Loc loc) throws IOException {
        ListPage page = reader.list(new ListRequest(loc.bucket(), loc.prefix(), "/", null, 1));
        return page.objects().isEmpty() && page.commonPrefixes().isEmpty();
    }

    void makeLocal(Loc loc) {
        localDirs.add(loc.bucket() + "/" + loc.key());
    }

    /** Forgets a folder made with mkdir; false when there was none. */
    boolean removeLocal(Loc loc) {
        return localDirs.remove(loc.bucket() + "/" + loc.key());
    }

    /** A file of {@code key} was written through write-back: listings show it until the store does. */
    void pending(ObjectKey key) {
        pendingWrites.add(key.bucket() + "/" + key.key());
    }

    /** {@code key} was deleted. */
    void deleted(ObjectKey key) {
        pendingWrites.remove(key.bucket() + "/" + key.key());
    }

    /** After a write, rename or delete of {@code key}: the folders its key implies are real now. */
    void written(ObjectKey key) {
        String k = key.key();
        for (int i = k.indexOf('/'); i >= 0; i = k.indexOf('/', i + 1)) {
            localDirs.remove(key.bucket() + "/" + k.substring(0, i));
        }
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

    // ---- folder handles ---------------------------------------------------------------------------------

    void open(long id, Loc loc) {
        dirs.put(id, new DirCursor(loc));
    }

    void release(long id) {
        dirs.remove(id);
    }

    /** Fills the kernel's buffer from {@code offset} on; see {@link FuseOperations#readdir}. */
    int read(long id, DirFiller filler, long offset, int flags) throws IOException {
        DirCursor c = dirs.get(id);
        if (c == null) {
            return -Errnos.EBADF;
        }
        int plus = (flags & FuseOperations.FUSE_READDIR_PLUS) != 0 ? DirFiller.FUSE_FILL_DIR_PLUS : 0;
        synchronized (c) {
            long off = offset;
            if (off == 0) {
                if (filler.fill(".", attrs::dir, 1, 0) != 0) {
                    return 0;
                }
                off = 1;
            }
            if (off == 1) {
                if (filler.fill("..", attrs::dir, 2, 0) != 0) {
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
                        attrs.dir(st);
                    } else {
                        attrs.file(st, e.meta().size(), e.meta().lastModified());
                    }
                }, index + 3, plus);
                if (r != 0) {
                    return 0; // the kernel's buffer is full; it asks again from index + 3
                }
                index++;
            }
        }
    }

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
        Map<String, ObjectKey> pending = new TreeMap<>();

        DirCursor(Loc loc) {
            this.loc = loc;
        }

        void reset() {
            pending = new TreeMap<>();
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
                    addLocalOnly(entries, prefix);
                }
            }
            started = true;
            page = entries;
            return true;
        }

        /** After the store's last page: files written here not listed yet, and folders made with mkdir. */
        private void addLocalOnly(List<Entry> entries, String prefix) throws IOException {
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

        private boolean usable(String name) {
            return !name.isEmpty() && !name.equals(".") && !name.equals("..") && name.indexOf('/') < 0;
        }
    }
}
