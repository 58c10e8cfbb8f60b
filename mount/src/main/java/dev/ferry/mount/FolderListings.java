package dev.ferry.mount;

import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The folder listings the mount keeps, because listings are the metadata. A LIST page names each object's size, ETag
 * and last-modified time: everything {@code stat} and {@code open} need. So a folder's whole listing (up to
 * {@link #MAX_CACHED_ENTRIES} entries in all folders together) is kept for {@code metadata-ttl}, and {@link #listed}
 * answers lookups from it: a file the listing described is stat'ed and opened with no HEAD, and a subfolder it named
 * is a folder with no request at all. An open gives the listed size and ETag to the local tier
 * ({@link dev.ferry.tier.TierHints#listed}), whose reads then need no HEAD either (at open, not at listing: the
 * tier's metadata then grows with the files read, not with the keys listed).
 *
 * <p>The first lookup in a folder no listing describes yet lists it (one LIST page for up to 1,000 names, two at
 * most: {@link #AHEAD_ENTRIES}), shared by the lookups that wait for it, rather than asking the store per file: a
 * reader that opens paths it never listed (a DataLoader over a file of names, an image folder) then costs one LIST per
 * folder, not a request per file. A larger folder goes on being listed in the background ({@link Growing}, up to
 * {@link #LOOKUP_LISTED_ENTRIES} names), its pages answering lookups as they arrive, the rest asked of the store until
 * they do: the kernel sends one lookup of a folder at a time (libfuse before 3.16 never asks it for parallel lookups),
 * so a request per lookup would have every reader of the folder wait for each other's (20,000 files of one folder:
 * 20 LIST pages in about a second, against 20,000 requests one after another). A folder written through the mount is
 * left to requests per name until the TTL has passed. When a kept listing has expired, the next lookup in it lists
 * the folder again: whole, when it had at most {@link #MAX_RELIST_ENTRIES} entries; a larger one grows again in the
 * background, as a first listing does. When a reader lists a folder, its subfolders are listed ahead, a few at once
 * ({@link #listAhead}): {@code os.walk} then runs at the pace of parallel LISTs. A name a fresh listing lacks is not
 * taken as absent: it is asked of the store (a file created upstream since is found at once). Writes, deletes,
 * renames and mkdir through the mount drop the listings of the folders they touch ({@link #changed}).
 *
 * <p>Thread-safe: the kept listings are guarded by their map; listings being made are a concurrent map of futures,
 * growing ones a concurrent map of {@link Growing}.
 */
final class FolderListings {
    /** A folder lookups list in the background ({@link Growing}) is listed up to this many names (100 pages); larger: requests per name. */
    static final int LOOKUP_LISTED_ENTRIES = 100 * ListRequest.DEFAULT_MAX_KEYS;
    /** Entries kept in all folders' listings together (about 200 bytes each); least recently used dropped first. */
    static final int MAX_CACHED_ENTRIES = 1_000_000;
    /** An expired listing is listed again on lookup when it had at most this many entries (10 pages); larger: in the background ({@link Growing}). */
    static final int MAX_RELIST_ENTRIES = 10 * ListRequest.DEFAULT_MAX_KEYS;
    /** Subfolders of a folder a reader lists that are listed ahead, at most; see {@link #listAhead}. */
    static final int AHEAD_FOLDERS = 128;
    /** A subfolder listed ahead is kept only when it has at most this many entries (2 pages). */
    static final int AHEAD_ENTRIES = 2 * ListRequest.DEFAULT_MAX_KEYS;
    /** LISTs made ahead at once, in the whole mount. */
    static final int AHEAD_CONCURRENCY = 8;
    /** Subfolders to list ahead from which the tree under their folder is listed instead, see {@link #listAhead}. */
    static final int TREE_AT_LEAST = 2;
    /** Pages of a tree listed ahead, at most (10,000 keys); folders it did not reach are listed one at a time. */
    static final int TREE_PAGES = 10;
    /**
     * Pages a tree's first page shows to be left, from which the rest of it is listed a folder at a time instead
     * ({@link #folderAtATime}): a tree of 3,000 keys in 100 folders is listed in 3 pages one after another, one of
     * 20,000 as a page and then 96 folders, {@link #AHEAD_CONCURRENCY} at once.
     */
    static final int SPLIT_AT_PAGES = 4;

    private final ObjectStore reader;
    private final FolderPages pages;
    private final Clock clock;
    private final long ttlNanos;
    private final Executor ahead;
    private final Semaphore aheadPermits = new Semaphore(AHEAD_CONCURRENCY);
    private final LocalNames local;
    /** Listings kept, by "bucket/prefix", least recently used first; guarded by itself. */
    private final LinkedHashMap<String, Listing> listings = new LinkedHashMap<>(64, 0.75f, true);
    private long listedEntries; // in listings, under its lock
    /** Listings being made for lookups or ahead, by "bucket/prefix": one LIST however many lookups wait. */
    private final Map<String, CompletableFuture<Listing>> listing = new ConcurrentHashMap<>();
    /** Folders too large for a lookup to wait for their listing, being listed in the background for lookups, by "bucket/prefix". */
    private final Map<String, Growing> growing = new ConcurrentHashMap<>();
    /** Bumped by every change made through the mount: a listing begun before one is not kept. */
    private final AtomicLong generation = new AtomicLong();
    /**
     * Folders whose lookups go to the store for a TTL, by "bucket/prefix", with when (in {@code clock}'s nanos): those
     * too large to list for lookups ({@link #LOOKUP_LISTED_ENTRIES}), those whose listing failed, and those written
     * through the mount (a writer's creates would otherwise list the folder again after each file it adds).
     */
    private final Map<String, Long> headsOnly = new ConcurrentHashMap<>();
    /**
     * Folders found too large to keep when listed ahead of a reader ({@link #AHEAD_ENTRIES}), with when: not listed
     * ahead again within the TTL. A lookup in one still lists it for lookups ({@link Growing}).
     */
    private final Map<String, Long> tooLargeAhead = new ConcurrentHashMap<>();
    /** Folders remembered in {@link #headsOnly}, or in {@link #tooLargeAhead}, at most; past it the memo starts again. */
    static final int MAX_HEADS_ONLY = 100_000;

    /**
     * Listings are kept for {@code ttl} of {@code clock}'s time (0: never); subfolders are listed ahead on
     * {@code ahead} (null: never). A listing that names a folder made with mkdir makes it real in {@code local}.
     */
    FolderListings(ObjectStore reader, Clock clock, Duration ttl, Executor ahead, LocalNames local) {
        this.reader = reader;
        this.pages = new FolderPages(reader, local);
        this.clock = clock;
        this.ttlNanos = ttl.toNanos();
        this.ahead = ahead;
        this.local = local;
    }

    /** One page of a folder's listing at a time (a reader's readdir reads it so, past what is kept). */
    FolderPages pages() {
        return pages;
    }

    /** A folder's listing as the store gave it (its store entries only), kept for the metadata TTL. Immutable. */
    private record Listing(List<FolderEntry> entries, Map<String, FolderEntry> byName, long at) {
        static Listing of(List<FolderEntry> entries, long at) {
            Map<String, FolderEntry> byName = new HashMap<>();
            for (FolderEntry e : entries) {
                byName.merge(e.name(), e, (a, b) -> a.meta() != null ? a : b); // a file and a folder of one name: the file
            }
            return new Listing(List.copyOf(entries), byName, at);
        }
    }

    /**
     * A folder's listing for lookups, growing page by page on the ahead pool: the names its pages gave so far answer
     * lookups (for the TTL from its start, as a kept listing's), a name not reached yet is asked of the store; kept
     * whole once its last page is in. Thread-safe: one lister appends, lookups read.
     */
    private static final class Growing {
        final long at;
        final long gen;
        private final List<FolderEntry> entries;
        private final Map<String, FolderEntry> byName = new ConcurrentHashMap<>();

        Growing(List<FolderEntry> first, long at, long gen) {
            this.at = at;
            this.gen = gen;
            this.entries = new ArrayList<>(first);
            first.forEach(this::name);
        }

        void add(List<FolderEntry> page) {
            entries.addAll(page);
            page.forEach(this::name);
        }

        private void name(FolderEntry e) {
            byName.merge(e.name(), e, (a, b) -> a.meta() != null ? a : b); // a file and a folder of one name: the file
        }

        int size() {
            return entries.size();
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

    private void keep(String id, List<FolderEntry> entries, long at, long gen) {
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

    private void headsOnly(String id, long since) {
        remember(headsOnly, id, since);
    }

    /** Whether {@code memo} holds {@code id} from within the TTL before {@code now}. */
    private boolean recent(Map<String, Long> memo, String id, long now) {
        Long since = memo.get(id);
        return since != null && now - since < ttlNanos;
    }

    private static void remember(Map<String, Long> memo, String id, long since) {
        if (memo.size() >= MAX_HEADS_ONLY) {
            memo.clear();
        }
        memo.put(id, since);
    }

    /** What a listing is made for, which says what happens when the folder is larger than it lists. */
    private enum Purpose {
        /** A lookup waits for it: a larger folder grows in the background ({@link Growing}). */
        LOOKUP,
        /** Ahead of a reader: a larger folder is not listed ahead again within the TTL ({@link #tooLargeAhead}). */
        AHEAD,
        /** An expired listing again: a larger folder's lookups go to the store for the TTL. */
        RELIST
    }

    /**
     * Something under {@code key} changed through the mount: the listings of the folders above it are dropped, and
     * lookups in them ask the store for a TTL rather than listing them again.
     */
    void changed(String bucket, String key) {
        generation.incrementAndGet();
        long now = clock.nanoTime();
        synchronized (listings) {
            for (int i = key.lastIndexOf('/'); ; i = key.lastIndexOf('/', i - 1)) {
                String id = folderId(bucket, i < 0 ? "" : key.substring(0, i + 1));
                headsOnly(id, now);
                Listing old = listings.remove(id);
                if (old != null) {
                    listedEntries -= old.entries().size();
                }
                growing.remove(id); // its lister stops at its next page
                if (i <= 0) {
                    break;
                }
            }
        }
    }

    /**
     * What a listing of its folder says of {@code loc} (a key): a file with its metadata, or a folder (meta null);
     * null when no fresh listing names it. An expired listing of at most {@link #MAX_RELIST_ENTRIES} entries is
     * listed again first; a folder never listed is listed first when small ({@link #lookupListing}).
     */
    FolderEntry listed(MountPath loc) throws IOException {
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
            return lookupListing(loc.bucket(), prefix, id, name); // never listed (or dropped)
        }
        if (!fresh(l, clock.nanoTime())) {
            if (l.entries().size() > MAX_RELIST_ENTRIES) {
                return grownEntry(loc.bucket(), prefix, id, name);
            }
            l = relist(loc.bucket(), prefix, id);
            if (l == null) {
                return null;
            }
        }
        return l.byName().get(name);
    }

    /**
     * What a reader opening {@code prefix} can be served without a LIST of its own: a fresh kept listing, or one
     * being made (ahead, or for a lookup), waited for; null when there is none, or making it failed (the reader then
     * lists the folder itself). Serving one lists its subfolders ahead, as a reader's own listing does.
     */
    List<FolderEntry> keptEntries(String bucket, String prefix) {
        String id = folderId(bucket, prefix);
        Listing l = kept(id);
        if (l == null || !fresh(l, clock.nanoTime())) {
            try {
                l = pending(id); // being listed ahead: the same LIST serves this reader
            } catch (IOException failed) {
                l = null; // listed by the reader instead
            }
        }
        if (l == null || !fresh(l, clock.nanoTime())) {
            return null;
        }
        listAhead(bucket, prefix, l.entries());
        return l.entries();
    }

    /**
     * A reader's listing of {@code prefix}, gathered page by page to be kept whole at its last page; null when
     * listings are not kept ({@code metadata-ttl} 0). Begin one when the reader starts from the first page.
     */
    Gathering gather(String bucket, String prefix) {
        return ttlNanos <= 0 ? null : new Gathering(bucket, prefix);
    }

    /** See {@link #gather}. Not thread-safe: one folder handle's. */
    final class Gathering {
        private final String bucket;
        private final String prefix;
        private final long gen = generation.get();
        private final long at = clock.nanoTime();
        /** Null once there are too many to keep, or once kept. */
        private List<FolderEntry> entries = new ArrayList<>();

        private Gathering(String bucket, String prefix) {
            this.bucket = bucket;
            this.prefix = prefix;
        }

        /** The store's entries of the next page. */
        void add(List<FolderEntry> page) {
            if (entries != null) {
                entries.addAll(page);
                if (entries.size() > MAX_CACHED_ENTRIES) {
                    entries = null;
                }
            }
        }

        /** After the last page: keeps the listing (unless something changed through the mount meanwhile), lists its subfolders ahead. */
        void done() {
            if (entries != null) {
                keep(folderId(bucket, prefix), entries, at, gen);
                listAhead(bucket, prefix, entries);
                entries = null;
            }
        }
    }

    /**
     * A lookup of {@code name} in a folder no kept listing describes: lists the folder (up to {@link #AHEAD_ENTRIES},
     * once however many lookups wait), unless it was found too large or written within the TTL; what the listing
     * says of {@code name}, or null (not named, or not listed, or the LIST failed: the caller asks the store).
     */
    private FolderEntry lookupListing(String bucket, String prefix, String id, String name) throws IOException {
        if (recent(headsOnly, id, clock.nanoTime())) {
            return null;
        }
        if (growing.containsKey(id)) {
            return grownEntry(bucket, prefix, id, name);
        }
        CompletableFuture<Listing> mine = new CompletableFuture<>();
        CompletableFuture<Listing> running = listing.putIfAbsent(id, mine);
        Listing l;
        try {
            l = running != null ? await(running, id) : runListing(bucket, prefix, id, mine, AHEAD_ENTRIES, Purpose.LOOKUP);
        } catch (InterruptedIOException e) {
            throw e;
        } catch (IOException listingFailed) {
            return null; // the caller asks the store for the name itself, and reports what that says
        }
        return l != null ? l.byName().get(name) : growing.containsKey(id) ? grownEntry(bucket, prefix, id, name) : null;
    }

    /**
     * What the folder's growing listing ({@link Growing}) says of {@code name} so far, starting one (from the first
     * page, in the background) when none is under way; null when it has not reached the name (or none can be made):
     * the caller asks the store.
     */
    private FolderEntry grownEntry(String bucket, String prefix, String id, String name) {
        if (recent(headsOnly, id, clock.nanoTime())) {
            return null; // too large to list for lookups, its listing failed, or written through the mount: asked of the store
        }
        Growing g = growing.get(id);
        if (g == null && ahead != null) {
            Growing fresh = new Growing(List.of(), clock.nanoTime(), generation.get());
            if (growing.putIfAbsent(id, fresh) == null) {
                grow(bucket, prefix, id, fresh, null);
            }
            g = growing.get(id);
        }
        return g == null || clock.nanoTime() - g.at >= ttlNanos ? null : g.byName.get(name);
    }

    /**
     * Lists the next page of a growing listing ({@code token}; null: the first) on the ahead pool, then the one after
     * it as a task of its own (a permit of the pool is held for a page, not for the folder), while the listing is the
     * folder's and within {@link #LOOKUP_LISTED_ENTRIES}; keeps it whole at its last page, or leaves the folder to
     * requests per name for the TTL (too large, or the listing failed).
     */
    private void grow(String bucket, String prefix, String id, Growing g, String token) {
        run(() -> {
            String next;
            try {
                List<FolderEntry> page = new ArrayList<>();
                next = pages.list(bucket, prefix, token, page);
                g.add(page);
            } catch (IOException | RuntimeException failed) {
                if (growing.remove(id, g)) {
                    headsOnly(id, clock.nanoTime()); // not listed again on every lookup while the store refuses
                }
                return;
            }
            if (growing.get(id) != g) {
                return; // changed through the mount meanwhile: dropped
            }
            if (next == null) {
                keep(id, g.entries, g.at, g.gen); // kept before it leaves the map: lookups find one or the other
                growing.remove(id, g);
            } else if (g.size() > LOOKUP_LISTED_ENTRIES) {
                headsOnly(id, g.at);
                growing.remove(id, g);
            } else {
                grow(bucket, prefix, id, g, next);
            }
        }, List.of(), () -> growing.remove(id, g));
    }

    /** Lists a folder again for lookups, once however many wait; null when the listing was not kept. */
    private Listing relist(String bucket, String prefix, String id) throws IOException {
        CompletableFuture<Listing> mine = new CompletableFuture<>();
        CompletableFuture<Listing> running = listing.putIfAbsent(id, mine);
        if (running != null) {
            return await(running, id);
        }
        return runListing(bucket, prefix, id, mine, MAX_CACHED_ENTRIES, Purpose.RELIST);
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

    /** Folders being listed now, ahead of a reader or for one. */
    int beingListed() {
        return listing.size() + growing.size();
    }

    /** The listing being made of {@code id} (ahead, or for a lookup), once made; null when none is being made. */
    private Listing pending(String id) throws IOException {
        CompletableFuture<Listing> f = listing.get(id);
        return f == null ? null : await(f, id);
    }

    /**
     * Lists a folder whole (at most {@code maxEntries}), keeps the listing and completes {@code mine} with it (null
     * when it was not kept: too large, or something changed through the mount meanwhile). A folder larger than that
     * is left as its {@link Purpose} says.
     */
    private Listing runListing(String bucket, String prefix, String id, CompletableFuture<Listing> mine, int maxEntries,
            Purpose purpose) throws IOException {
        try {
            long gen = generation.get();
            long at = clock.nanoTime();
            List<FolderEntry> entries = new ArrayList<>();
            String token = null;
            do {
                token = pages.list(bucket, prefix, token, entries);
            } while (token != null && entries.size() <= maxEntries);
            Listing l = null;
            if (token == null) {
                keep(id, entries, at, gen);
                l = kept(id);
            } else if (purpose == Purpose.LOOKUP && ahead != null) {
                Growing g = new Growing(entries, at, gen); // too large to wait for: its lookups read its pages as they come
                growing.put(id, g);
                grow(bucket, prefix, id, g, token);
            } else if (purpose == Purpose.AHEAD) {
                remember(tooLargeAhead, id, at);
            } else {
                headsOnly(id, at);
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
     * A reader listed {@code prefix} (a walker, {@code ls}, {@code find}): its subfolders not kept yet, the first
     * {@link #AHEAD_FOLDERS} of them, are listed ahead, each kept only when it is small ({@link #AHEAD_ENTRIES}); a
     * walker then finds them kept instead of waiting for one LIST after another. Where there are several, the tree
     * under {@code prefix} is listed in pages with no delimiter ({@link TreeListing}), which hands over every folder in
     * it, at any depth, as it completes (at most {@link #TREE_PAGES} pages; of a large tree, one: {@link #listTree}).
     * What it did not reach is listed a folder at a time, {@link #AHEAD_CONCURRENCY} at once. Listings made a folder
     * at a time list nothing further ahead themselves: the walker's next readdir does, one level on.
     */
    private void listAhead(String bucket, String prefix, List<FolderEntry> entries) {
        if (ttlNanos <= 0 || ahead == null) {
            return;
        }
        Map<String, CompletableFuture<Listing>> claimed = new LinkedHashMap<>();
        long now = clock.nanoTime();
        for (FolderEntry e : entries) {
            if (e.meta() != null || !FolderPages.usable(e.name())) {
                continue;
            }
            if (claimed.size() >= AHEAD_FOLDERS) {
                break;
            }
            String sub = prefix + e.name() + "/";
            String id = folderId(bucket, sub);
            Listing l = kept(id);
            if (l != null && fresh(l, now) || recent(tooLargeAhead, id, now) || recent(headsOnly, id, now) || growing.containsKey(id)) {
                continue; // kept, found too large to keep (or written through the mount) within the TTL, or growing
            }
            CompletableFuture<Listing> mine = new CompletableFuture<>();
            if (listing.putIfAbsent(id, mine) == null) {
                claimed.put(sub, mine);
            }
        }
        if (claimed.size() >= TREE_AT_LEAST) {
            run(() -> listTree(bucket, prefix, claimed), claimed.values());
        } else {
            claimed.forEach((sub, mine) -> aheadOne(bucket, sub, mine));
        }
    }

    /**
     * Lists the tree under {@code prefix} for the claimed subfolders ({@link TreeListing}), then those it did not
     * complete a folder at a time: all but those its first page completed when that page shows a large tree
     * ({@link #folderAtATime}).
     */
    private void listTree(String bucket, String prefix, Map<String, CompletableFuture<Listing>> claimed) {
        long gen = generation.get();
        long at = clock.nanoTime();
        List<String> subs = List.copyOf(claimed.keySet()); // in the store's order, as its listing named them
        try {
            new TreeListing(reader, bucket, prefix, AHEAD_ENTRIES, (sub, entries) -> handOver(bucket, sub, entries, claimed, at, gen),
                    reached -> folderAtATime(subs.size(), subs.indexOf(reached))).run(TREE_PAGES);
        } catch (IOException | RuntimeException failed) {
            // what it did not hand over is listed a folder at a time
        }
        claimed.forEach((sub, mine) -> aheadOne(bucket, sub, mine));
    }

    /**
     * Whether the rest of a tree whose first page ended in the subfolder at {@code reached} (of its {@code subs}
     * claimed subfolders; -1: one not claimed) is listed a folder at a time, {@link #AHEAD_CONCURRENCY} at once,
     * rather than in pages one after another: when at least {@link #SPLIT_AT_PAGES} pages are left and a page
     * holds at most {@link #AHEAD_CONCURRENCY} folders, so that the folders' LISTs at once take fewer rounds than the
     * pages. Folders are assumed alike in size. A LIST page's cost need not be the same at any depth of a tree: where
     * a store walks the whole tree for each page (s3proxy's file system backend), a folder's LIST costs its folder.
     */
    static boolean folderAtATime(int subs, int reached) {
        if (reached < 0) {
            return false; // no measure of the rest
        }
        int perPage = reached + 1; // the last one partly
        int restPages = (subs - perPage) / perPage;
        return perPage <= AHEAD_CONCURRENCY && restPages >= SPLIT_AT_PAGES;
    }

    /** A folder a tree's listing found complete: kept (or marked too large), and its waiter, if any, given it. */
    private void handOver(String bucket, String sub, List<FolderEntry> entries, Map<String, CompletableFuture<Listing>> claimed,
            long at, long gen) {
        String id = folderId(bucket, sub);
        if (entries == null) {
            remember(tooLargeAhead, id, at);
        } else {
            keep(id, entries, at, gen);
            for (FolderEntry e : entries) {
                if (e.meta() == null) {
                    local.removeFolder(bucket, sub + e.name()); // made with mkdir, listed now: real
                }
            }
        }
        CompletableFuture<Listing> mine = claimed.remove(sub);
        if (mine != null) {
            mine.complete(entries == null ? null : kept(id));
            listing.remove(id, mine);
        }
    }

    /** Lists one claimed subfolder ahead of a reader ({@link #AHEAD_ENTRIES} at most), on the ahead pool. */
    private void aheadOne(String bucket, String sub, CompletableFuture<Listing> mine) {
        run(() -> {
            try {
                runListing(bucket, sub, folderId(bucket, sub), mine, AHEAD_ENTRIES, Purpose.AHEAD);
            } catch (IOException | RuntimeException failed) {
                // a reader that gets there lists it itself
            }
        }, List.of(mine));
    }

    /**
     * Runs {@code work} on the ahead pool holding one of its {@link #AHEAD_CONCURRENCY} permits; when the pool is
     * closing, {@code mine} (the listings it would have made) complete with none, for their waiters to list themselves.
     */
    private void run(Runnable work, Collection<CompletableFuture<Listing>> mine) {
        run(work, mine, () -> { });
    }

    /** {@link #run(Runnable, Collection)}, with {@code notRun} run too when the pool is closing. */
    private void run(Runnable work, Collection<CompletableFuture<Listing>> mine, Runnable notRun) {
        Runnable none = () -> {
            List.copyOf(mine).forEach(f -> {
                f.complete(null);
                listing.values().remove(f);
            });
            notRun.run();
        };
        try {
            ahead.execute(() -> {
                try {
                    aheadPermits.acquire();
                } catch (InterruptedException closing) {
                    none.run();
                    return;
                }
                try {
                    work.run();
                } finally {
                    aheadPermits.release();
                }
            });
        } catch (RejectedExecutionException closing) {
            none.run();
        }
    }
}
