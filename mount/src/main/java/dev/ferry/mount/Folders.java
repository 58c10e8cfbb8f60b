package dev.ferry.mount;

import dev.ferry.store.BucketOperations;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.time.Clock;
import dev.ferry.writeback.WriteBackStore;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import org.cryptomator.jfuse.api.DirFiller;
import org.cryptomator.jfuse.api.FuseOperations;

/**
 * The mount's folders: buckets at the top, prefixes (delimiter {@code /}) below. Listings are paged as the store
 * pages them (ListObjectsV2, 1,000 keys): {@code readdir} returns entries with offsets, and a folder handle holds
 * one page at a time. Two kinds of folder exist only here: those made with {@code mkdir} (S3 has no empty folders;
 * one lasts until a file is written under it) and those implied by files written through write-back and not
 * uploaded yet, which listings show too.
 *
 * <h2>Listings are the metadata</h2>
 * A LIST page names each object's size, ETag and last-modified time: everything {@code stat} and {@code open}
 * need. So a folder's whole listing (up to {@link #MAX_CACHED_ENTRIES} entries) is kept with the folder for
 * {@code metadata-ttl}, and {@link #listed} answers lookups from it: a file the listing described is stat'ed and
 * opened with no HEAD, and a subfolder it named is a folder with no request at all. An open gives the listed size
 * and ETag to the local tier ({@link dev.ferry.cache.CachingStore#listed}), whose reads then need no HEAD either
 * (at open, not at listing: the tier's metadata then grows with the files read, not with the keys listed).
 * When a kept listing has expired, the next lookup in it lists the folder again (one paginated LIST, shared by the
 * lookups that wait for it) rather than sending a HEAD per file. When a reader lists a folder, its subfolders are
 * listed ahead, a few at once ({@link #listAhead}): {@code os.walk} then runs at the pace of parallel LISTs. A name a fresh listing lacks is not taken as absent:
 * it is asked of the store (a file created upstream since is found at once). Writes, deletes, renames and mkdir
 * through the mount drop the listings of the folders they touch.
 *
 * <p>Consistency: what the store changes behind the mount's back (another writer) is seen within
 * {@code metadata-ttl} of the listing or HEAD that described it, as with the tier's metadata; S3 objects are
 * immutable per ETag, and every read names the ETag it opened ({@code If-Match}), so a stale listing can make a
 * file look older or smaller for that long, never mix versions.
 *
 * <p>Thread-safe: concurrent sets; a folder handle is guarded by itself; the kept listings by their map.
 */
final class Folders {
    /** Entries kept in all folders' listings together (about 200 bytes each); least recently used dropped first. */
    static final int MAX_CACHED_ENTRIES = 1_000_000;
    /** An expired listing is listed again on lookup when it had at most this many entries (10 pages); larger: HEAD. */
    static final int MAX_RELIST_ENTRIES = 10 * ListRequest.DEFAULT_MAX_KEYS;
    /** Subfolders of a folder a reader lists that are listed ahead, at most; see {@link #listAhead}. */
    static final int AHEAD_FOLDERS = 128;
    /** A subfolder listed ahead is kept only when it has at most this many entries (2 pages). */
    static final int AHEAD_ENTRIES = 2 * ListRequest.DEFAULT_MAX_KEYS;
    /** LISTs made ahead at once, in the whole mount. */
    static final int AHEAD_CONCURRENCY = 8;

    private final ObjectStore reader;
    private final Clock clock;
    private final long ttlNanos;
    private final Executor ahead;
    private final Semaphore aheadPermits = new Semaphore(AHEAD_CONCURRENCY);
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
    /** Listings kept, by "bucket/prefix", least recently used first; guarded by itself. */
    private final LinkedHashMap<String, Listing> listings = new LinkedHashMap<>(64, 0.75f, true);
    private long listedEntries; // in listings, under its lock
    /** Listings being made for lookups, by "bucket/prefix": one LIST however many lookups wait. */
    private final Map<String, CompletableFuture<Listing>> listing = new ConcurrentHashMap<>();
    /** Bumped by every change made through the mount: a listing begun before one is not kept. */
    private final AtomicLong generation = new AtomicLong();

    /** Listings are kept for {@code ttl} of {@code clock}'s time; subfolders are listed ahead on {@code ahead} (null: never). */
    Folders(ObjectStore reader, Clock clock, Duration ttl, Executor ahead, BucketOperations buckets, WriteBackStore writeBack, Attrs attrs) {
        this.reader = reader;
        this.clock = clock;
        this.ahead = ahead;
        this.ttlNanos = ttl.toNanos();
        this.buckets = buckets;
        this.writeBack = writeBack;
        this.attrs = attrs;
    }

    /** A folder's listing as the store gave it (its store entries only), kept for the metadata TTL. Immutable. */
    private record Listing(List<Entry> entries, Map<String, Entry> byName, long at) {
        static Listing of(List<Entry> entries, long at) {
            Map<String, Entry> byName = new HashMap<>();
            for (Entry e : entries) {
                byName.merge(e.name(), e, (a, b) -> a.meta() != null ? a : b); // a file and a folder of one name: the file
            }
            return new Listing(List.copyOf(entries), byName, at);
        }
    }

    private static String folderId(String bucket, String prefix) {
        return bucket + "/" + prefix;
    }

    private boolean fresh(Listing l, long now) {
        return now - l.at() < ttlNanos;
    }

    private Listing kept(String id) {
        synchronized (listings) {
            return listings.get(id);
        }
    }

    private void keep(String id, List<Entry> entries, long at, long gen) {
        if (ttlNanos <= 0 || entries.size() > MAX_CACHED_ENTRIES) {
            return;
        }
        synchronized (listings) {
            if (generation.get() != gen) {
                return; // something changed through the mount while it was listed: the listing may lack it
            }
            Listing old = listings.put(id, Listing.of(entries, at));
            listedEntries += entries.size() - (old == null ? 0 : old.entries().size());
            var it = listings.entrySet().iterator();
            while (listedEntries > MAX_CACHED_ENTRIES && it.hasNext()) {
                listedEntries -= it.next().getValue().entries().size();
                it.remove();
            }
        }
    }

    /** Something under {@code key} changed through the mount: the listings of the folders above it are dropped. */
    private void changed(String bucket, String key) {
        generation.incrementAndGet();
        synchronized (listings) {
            for (int i = key.lastIndexOf('/'); ; i = key.lastIndexOf('/', i - 1)) {
                Listing old = listings.remove(folderId(bucket, i < 0 ? "" : key.substring(0, i + 1)));
                if (old != null) {
                    listedEntries -= old.entries().size();
                }
                if (i <= 0) {
                    break;
                }
            }
        }
    }

    /**
     * What a listing of its folder says of {@code loc} (a key): a file with its metadata, or a folder (meta null);
     * null when no fresh listing names it. An expired listing of at most {@link #MAX_RELIST_ENTRIES} entries is
     * listed again first.
     */
    Entry listed(Loc loc) throws IOException {
        if (ttlNanos <= 0 || loc.key() == null) {
            return null;
        }
        int slash = loc.key().lastIndexOf('/');
        String prefix = slash < 0 ? "" : loc.key().substring(0, slash + 1);
        String name = loc.key().substring(slash + 1);
        String id = folderId(loc.bucket(), prefix);
        Listing l = kept(id);
        if (l == null) {
            l = pending(id); // being listed ahead: wait for it
        }
        if (l == null) {
            return null; // never listed (or dropped): a HEAD is cheaper than listing a folder of unknown size
        }
        if (!fresh(l, clock.nanoTime())) {
            if (l.entries().size() > MAX_RELIST_ENTRIES) {
                return null;
            }
            l = relist(loc.bucket(), prefix, id);
            if (l == null) {
                return null;
            }
        }
        return l.byName().get(name);
    }

    /** Lists a folder again for lookups, once however many wait; null when the listing was not kept. */
    private Listing relist(String bucket, String prefix, String id) throws IOException {
        CompletableFuture<Listing> mine = new CompletableFuture<>();
        CompletableFuture<Listing> running = listing.putIfAbsent(id, mine);
        if (running != null) {
            return await(running, id);
        }
        return runListing(bucket, prefix, id, mine, MAX_CACHED_ENTRIES);
    }

    private static Listing await(CompletableFuture<Listing> f, String id) throws IOException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while listing " + id);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException("cannot list " + id, e.getCause());
        }
    }

    /** The listing being made of {@code id} (ahead, or for a lookup), once made; null when none is being made. */
    private Listing pending(String id) throws IOException {
        CompletableFuture<Listing> f = listing.get(id);
        return f == null ? null : await(f, id);
    }

    /**
     * Lists a folder whole (at most {@code maxEntries}), keeps the listing and completes {@code mine} with it (null
     * when it was not kept: too large, or something changed through the mount meanwhile).
     */
    private Listing runListing(String bucket, String prefix, String id, CompletableFuture<Listing> mine, int maxEntries)
            throws IOException {
        try {
            long gen = generation.get();
            long at = clock.nanoTime();
            List<Entry> entries = new ArrayList<>();
            String token = null;
            do {
                ListPage p = reader.list(new ListRequest(bucket, prefix, "/", token, ListRequest.DEFAULT_MAX_KEYS));
                addEntries(bucket, prefix, p, entries);
                token = p.nextToken();
            } while (token != null && entries.size() <= maxEntries);
            Listing l = null;
            if (token == null) {
                keep(id, entries, at, gen);
                l = kept(id);
            }
            mine.complete(l);
            return l;
        } catch (IOException | RuntimeException e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            listing.remove(id, mine);
        }
    }

    /**
     * A reader listed {@code prefix} (a walker, {@code ls}, {@code find}): its subfolders not kept yet are listed
     * ahead, {@link #AHEAD_CONCURRENCY} at once, the first {@link #AHEAD_FOLDERS} of them, each only when it is
     * small ({@link #AHEAD_ENTRIES}); a walker then finds them kept instead of waiting for one LIST after another.
     * Listings made ahead list nothing further ahead themselves: the walker's next readdir does, one level on.
     */
    private void listAhead(String bucket, String prefix, List<Entry> entries) {
        if (ttlNanos <= 0 || ahead == null) {
            return;
        }
        int n = 0;
        long now = clock.nanoTime();
        for (Entry e : entries) {
            if (e.meta() != null || !usable(e.name())) {
                continue;
            }
            if (++n > AHEAD_FOLDERS) {
                return;
            }
            String sub = prefix + e.name() + "/";
            String id = folderId(bucket, sub);
            Listing l = kept(id);
            if (l != null && fresh(l, now)) {
                continue;
            }
            CompletableFuture<Listing> mine = new CompletableFuture<>();
            if (listing.putIfAbsent(id, mine) != null) {
                continue;
            }
            try {
                ahead.execute(() -> {
                    try {
                        aheadPermits.acquire();
                    } catch (InterruptedException closing) {
                        mine.complete(null);
                        listing.remove(id, mine);
                        return;
                    }
                    try {
                        runListing(bucket, sub, id, mine, AHEAD_ENTRIES);
                    } catch (IOException | RuntimeException failed) {
                        // a reader that gets there lists it itself
                    } finally {
                        aheadPermits.release();
                    }
                });
            } catch (RejectedExecutionException closing) {
                mine.complete(null);
                listing.remove(id, mine);
                return;
            }
        }
    }

    /** The entries of a page of {@code prefix}'s listing, added to {@code entries}. */
    private void addEntries(String bucket, String prefix, ListPage p, List<Entry> entries) {
        for (String cp : p.commonPrefixes()) {
            String name = cp.substring(prefix.length(), cp.length() - 1);
            if (usable(name)) {
                entries.add(new Entry(name, null));
                localDirs.remove(bucket + "/" + cp.substring(0, cp.length() - 1));
            }
        }
        for (ObjectMeta m : p.objects()) {
            String name = m.key().key().substring(prefix.length());
            if (usable(name)) {
                entries.add(new Entry(name, m));
            }
        }
    }

    private static boolean usable(String name) {
        return !name.isEmpty() && !name.equals(".") && !name.equals("..") && name.indexOf('/') < 0;
    }

    boolean bucketExists(String bucket) throws IOException {
        long now = clock.nanoTime();
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
        Entry e = listed(loc);
        if (e != null && e.meta() == null) {
            return true;
        }
        return isPrefix(loc.bucket(), loc.key());
    }

    /**
     * True when the store lists {@code key + "/"} as a common prefix: keys under it, or a folder it shows only as a
     * prefix (a store over a file system lists an empty directory so, and nothing under it). One LIST of the keys
     * beginning with {@code key} (delimiter {@code /}) usually answers, whether or not the parent was listed; siblings
     * that sort before {@code key/} ({@code key-1}, {@code key.txt}) page on until it is passed.
     */
    private boolean isPrefix(String bucket, String key) throws IOException {
        String folder = key + "/";
        String token = null;
        do {
            ListPage page = reader.list(new ListRequest(bucket, key, "/", token, 100));
            if (page.commonPrefixes().contains(folder)) {
                return true;
            }
            String last = null;
            for (ObjectMeta m : page.objects()) {
                last = m.key().key();
            }
            for (String cp : page.commonPrefixes()) {
                last = last == null || cp.compareTo(last) > 0 ? cp : last;
            }
            if (last != null && last.compareTo(folder) > 0) {
                return false; // listed past where key/ would be
            }
            token = page.nextToken();
        } while (token != null);
        return false;
    }

    /** True when the store lists nothing under the folder. */
    boolean emptyInStore(Loc loc) throws IOException {
        ListPage page = reader.list(new ListRequest(loc.bucket(), loc.prefix(), "/", null, 1));
        return page.objects().isEmpty() && page.commonPrefixes().isEmpty();
    }

    void makeLocal(Loc loc) {
        localDirs.add(loc.bucket() + "/" + loc.key());
        changed(loc.bucket(), loc.key());
    }

    /** Forgets a folder made with mkdir; false when there was none. */
    boolean removeLocal(Loc loc) {
        changed(loc.bucket(), loc.key());
        return localDirs.remove(loc.bucket() + "/" + loc.key());
    }

    /** A file of {@code key} was written through write-back: listings show it until the store does. */
    void pending(ObjectKey key) {
        pendingWrites.add(key.bucket() + "/" + key.key());
        changed(key.bucket(), key.key());
    }

    /** {@code key} was deleted. */
    void deleted(ObjectKey key) {
        pendingWrites.remove(key.bucket() + "/" + key.key());
        changed(key.bucket(), key.key());
    }

    /** After a write, rename or delete of {@code key}: the folders its key implies are real now. */
    void written(ObjectKey key) {
        changed(key.bucket(), key.key());
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
    record Entry(String name, ObjectMeta meta) {
    }

    /**
     * A folder handle: the listing page it is in, and the token of the next; one page in memory at a time, except
     * that a folder's whole listing (pages of at most {@link #MAX_CACHED_ENTRIES} entries in all) is gathered to be
     * kept, and a fresh kept listing is served with no request.
     */
    private final class DirCursor {
        final Loc loc;
        List<Entry> page = List.of();
        long pageStart;
        String token;
        boolean started;
        boolean last;
        /** Children that exist only as local writes so far: shown after the store's last page unless it listed them. */
        Map<String, ObjectKey> pending = new TreeMap<>();
        /** The store's entries so far, to keep at the last page; null when not kept (too many, or the root). */
        List<Entry> gathered;
        long listedAt;
        long gen;

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
            gathered = loc.isRoot() || ttlNanos <= 0 ? null : new ArrayList<>();
            gen = generation.get();
            listedAt = clock.nanoTime();
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
                String prefix = loc.prefix();
                String id = folderId(loc.bucket(), prefix);
                Listing kept = started ? null : kept(id);
                if (!started && (kept == null || !fresh(kept, clock.nanoTime()))) {
                    try {
                        kept = pending(id); // being listed ahead: the same LIST serves this reader
                    } catch (IOException failed) {
                        kept = null; // listed here instead
                    }
                }
                if (kept != null && fresh(kept, clock.nanoTime())) {
                    entries.addAll(kept.entries());
                    last = true;
                    gathered = null;
                    listAhead(loc.bucket(), prefix, kept.entries());
                } else {
                    ListPage p = reader.list(new ListRequest(loc.bucket(), prefix, "/", token, ListRequest.DEFAULT_MAX_KEYS));
                    addEntries(loc.bucket(), prefix, p, entries);
                    token = p.nextToken();
                    last = token == null;
                    if (gathered != null) {
                        gathered.addAll(entries);
                        if (gathered.size() > MAX_CACHED_ENTRIES) {
                            gathered = null;
                        } else if (last) {
                            keep(id, gathered, listedAt, gen);
                            listAhead(loc.bucket(), prefix, gathered);
                            gathered = null;
                        }
                    }
                }
                for (Entry e : entries) {
                    pending.remove(e.name());
                }
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
    }
}
