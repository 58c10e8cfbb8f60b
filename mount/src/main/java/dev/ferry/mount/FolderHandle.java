package dev.ferry.mount;

import dev.ferry.store.BucketOperations;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.cryptomator.jfuse.api.DirFiller;
import org.cryptomator.jfuse.api.FuseOperations;

/**
 * A folder open for reading, from {@code opendir} to {@code releasedir}: the listing page it is in, and the token of
 * the next. Listings are paged as the store pages them (ListObjectsV2, 1,000 keys), one page in memory at a time,
 * except that a folder's whole listing is gathered to be kept ({@link FolderListings.Gathering}), and a fresh kept
 * listing is served with no request. After the store's last page come the names that exist only here
 * ({@link LocalNames}) and that the store did not list.
 *
 * <p>Thread-safe: guarded by itself.
 */
final class FolderHandle {
    private final MountPath loc;
    private final ObjectStore reader;
    private final BucketOperations buckets;
    private final FolderListings listings;
    private final LocalNames local;
    private final Attrs attrs;
    private List<FolderEntry> page = List.of();
    private long pageStart;
    private String token;
    private boolean started;
    private boolean last;
    /** Children that exist only as local writes so far: shown after the store's last page unless it listed them. */
    private Map<String, ObjectKey> pending = new TreeMap<>();
    /** The store's entries so far, to keep at the last page; null when not kept (not kept at all, or the root). */
    private FolderListings.Gathering gathering;

    FolderHandle(MountPath loc, ObjectStore reader, BucketOperations buckets, FolderListings listings, LocalNames local, Attrs attrs) {
        this.loc = loc;
        this.reader = reader;
        this.buckets = buckets;
        this.listings = listings;
        this.local = local;
        this.attrs = attrs;
    }

    /**
     * Fills the kernel's buffer from {@code offset} on; see {@link FuseOperations#readdir}. Offsets 1 and 2 are
     * {@code .} and {@code ..}; entry {@code i} of the listing is offset {@code i + 3}.
     */
    synchronized int read(DirFiller filler, long offset, int flags) throws IOException {
        int plus = (flags & FuseOperations.FUSE_READDIR_PLUS) != 0 ? DirFiller.FUSE_FILL_DIR_PLUS : 0;
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
        if (index < pageStart || !started) {
            reset();
            if (!next()) {
                return 0;
            }
        }
        while (true) {
            while (index >= pageStart + page.size()) {
                if (!next()) {
                    return 0;
                }
            }
            FolderEntry e = page.get((int) (index - pageStart));
            ObjectMeta shown = e.meta() == null ? null : attrs.toShow(e.meta());
            int r = filler.fill(e.name(), st -> {
                if (shown == null) {
                    attrs.dir(st);
                } else {
                    attrs.file(st, shown);
                }
            }, index + 3, plus);
            if (r != 0) {
                return 0; // the kernel's buffer is full; it asks again from index + 3
            }
            if (shown != null && plus != 0) {
                attrs.remember(shown); // READDIRPLUS: the kernel took these attributes (a plain READDIR takes none)
            }
            index++;
        }
    }

    private void reset() {
        pending = new TreeMap<>();
        if (!loc.isRoot()) {
            for (ObjectKey k : local.writesUnder(loc.bucket(), loc.prefix())) {
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
        gathering = loc.isRoot() ? null : listings.gather(loc.bucket(), loc.prefix());
    }

    /** Loads the next page; false when there is none. */
    private boolean next() throws IOException {
        if (last) {
            return false;
        }
        pageStart += page.size();
        List<FolderEntry> entries = new ArrayList<>();
        if (loc.isRoot()) {
            for (String b : buckets.listBuckets().stream().map(BucketOperations.Bucket::name).toList()) {
                entries.add(new FolderEntry(b, null));
            }
            last = true;
        } else {
            String prefix = loc.prefix();
            List<FolderEntry> kept = started ? null : listings.keptEntries(loc.bucket(), prefix);
            if (kept != null) {
                entries.addAll(kept);
                last = true;
                gathering = null;
            } else {
                token = listings.pages().list(loc.bucket(), prefix, token, entries);
                last = token == null;
                if (gathering != null) {
                    gathering.add(entries);
                    if (last) {
                        gathering.done();
                        gathering = null;
                    }
                }
            }
            for (FolderEntry e : entries) {
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
    private void addLocalOnly(List<FolderEntry> entries, String prefix) throws IOException {
        for (Map.Entry<String, ObjectKey> w : pending.entrySet()) {
            if (w.getValue() == null) {
                entries.add(new FolderEntry(w.getKey(), null));
                local.removeFolder(loc.bucket(), prefix + w.getKey());
            } else {
                try {
                    entries.add(new FolderEntry(w.getKey(), reader.head(w.getValue())));
                } catch (ObjectNotFoundException gone) {
                    // deleted since
                }
            }
        }
        for (String name : local.foldersIn(loc.bucket(), prefix)) {
            entries.add(new FolderEntry(name, null));
        }
    }
}
