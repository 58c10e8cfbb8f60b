package dev.ferry.mount;

import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The folders under a prefix, from LIST pages with no delimiter. A page names up to 1,000 keys at any depth, so a
 * tree of small folders is listed in as many requests as it has thousands of keys, where a LIST per folder costs a
 * request (and a round trip) per folder: 100 class folders of 30 images are 3 pages, not 100 LISTs. Keys come in
 * order and a folder's keys are contiguous, so a folder is complete as soon as a key outside it arrives; each is
 * handed over then ({@link Sink#complete}), for a walker that waits on it, and the rest of the tree is still
 * being listed. What is found is what a LIST of each folder with {@code /} as delimiter names: its files with
 * their metadata, its subfolders by name, no name a path cannot hold ({@link FolderPages#usable}).
 *
 * <p>A listing can stop after its first page ({@link Split}), once that page shows how large the tree is: the
 * folders it had not completed are then left to others.
 *
 * <p>Not thread-safe: one run's.
 */
final class TreeListing {
    /** Where complete folders go. */
    interface Sink {
        /**
         * {@code prefix} (a folder under the tree's top, ending in {@code /}) is complete: its entries in key order,
         * or null when it has more than the run's cap (not kept: too large to hold ahead of a reader).
         */
        void complete(String prefix, List<FolderEntry> entries);
    }

    /** Asked once, after the first page when more follow, whether the listing stops there. */
    interface Split {
        /**
         * The first page ended inside {@code reached} (the top's subfolder holding its last key, ending in
         * {@code /}); true: the listing stops now, handing over none of the folders still open.
         */
        boolean stopAfterFirstPage(String reached);
    }

    private static final class Open {
        final String prefix;
        List<FolderEntry> entries = new ArrayList<>(); // null once over the cap

        Open(String prefix) {
            this.prefix = prefix;
        }
    }

    private final ObjectStore reader;
    private final String bucket;
    private final String top;
    private final int maxEntries;
    private final Sink sink;
    private final Split split;
    /** The folders open now, outermost first: each a prefix of the next, and of the last key seen. */
    private final ArrayDeque<Open> open = new ArrayDeque<>();

    /**
     * The folders under {@code top} (a folder's prefix, "" for the bucket's top; not itself listed) of {@code bucket},
     * asking {@code split} after the first page whether to stop there (null: never).
     */
    TreeListing(ObjectStore reader, String bucket, String top, int maxEntries, Sink sink, Split split) {
        this.reader = reader;
        this.bucket = bucket;
        this.top = top;
        this.maxEntries = maxEntries;
        this.sink = sink;
        this.split = split;
    }

    /**
     * Lists the tree, at most {@code maxPages} pages; every folder found complete is handed to the sink. True when
     * the whole tree was listed (every folder under it handed over), false when it has more pages than that or
     * stopped after the first (the folders still open then are not handed over).
     */
    boolean run(int maxPages) throws IOException {
        String token = null;
        for (int page = 0; page < maxPages; page++) {
            ListPage p = reader.list(new ListRequest(bucket, top, null, token, ListRequest.DEFAULT_MAX_KEYS));
            for (ObjectMeta m : p.objects()) {
                add(m);
            }
            token = p.nextToken();
            if (token == null) {
                while (!open.isEmpty()) {
                    close(open.pollLast());
                }
                return true;
            }
            if (page == 0 && split != null && !open.isEmpty() && split.stopAfterFirstPage(open.peekFirst().prefix)) {
                return false;
            }
        }
        return false;
    }

    private void add(ObjectMeta m) {
        String key = m.key().key();
        if (!key.startsWith(top)) {
            return;
        }
        while (!open.isEmpty() && !key.startsWith(open.peekLast().prefix)) {
            close(open.pollLast()); // a key past a folder: it is complete
        }
        String base = open.isEmpty() ? top : open.peekLast().prefix;
        String rest = key.substring(base.length());
        for (int slash = rest.indexOf('/'); slash >= 0; slash = rest.indexOf('/')) {
            String name = rest.substring(0, slash);
            if (!FolderPages.usable(name)) {
                return; // no path reaches it through the mount
            }
            entry(new FolderEntry(name, null)); // first seen here: a folder's keys are contiguous
            base = base + name + "/";
            open.addLast(new Open(base));
            rest = rest.substring(slash + 1);
        }
        if (FolderPages.usable(rest)) {
            entry(new FolderEntry(rest, m));
        }
    }

    /** An entry of the innermost open folder (none: the top, listed by its reader, not collected). */
    private void entry(FolderEntry e) {
        Open o = open.peekLast();
        if (o == null || o.entries == null) {
            return;
        }
        o.entries.add(e);
        if (o.entries.size() > maxEntries) {
            o.entries = null;
        }
    }

    private void close(Open o) {
        sink.complete(o.prefix, o.entries);
    }
}
