package dev.ferry.mount;

import dev.ferry.store.BucketOperations;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.time.Clock;
import dev.ferry.tier.LocalWrites;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.cryptomator.jfuse.api.DirFiller;
import org.cryptomator.jfuse.api.FuseOperations;

/**
 * The mount's folders: buckets at the top, prefixes (delimiter {@code /}) below. This class answers whether a path is
 * a folder and keeps the folder handles; the parts it composes do the rest:
 * <ul>
 *   <li>{@link FolderListings}: the listings kept for {@code metadata-ttl}, which are the metadata: a file a listing
 *       described is stat'ed and opened with no HEAD, and subfolders are listed ahead of a walker;
 *   <li>{@link LocalNames}: two kinds of folder exist only here, those made with {@code mkdir} (S3 has no empty
 *       folders; one lasts until a file is written under it) and those implied by files written through write-back
 *       and not uploaded yet, which listings show too;
 *   <li>{@link FolderHandle}: an open folder, read page by page as the store pages its listing.
 * </ul>
 *
 * <p>Consistency: what the store changes behind the mount's back (another writer) is seen within
 * {@code metadata-ttl} of the listing or HEAD that described it, as with the tier's metadata; S3 objects are
 * immutable per ETag, and every read names the ETag it opened ({@code If-Match}), so a stale listing can make a
 * file look older or smaller for that long, never mix versions. Writes, deletes, renames and mkdir through the
 * mount drop the listings of the folders they touch.
 *
 * <p>Thread-safe: the parts are; folder handles are a concurrent map, each handle guarded by itself.
 */
final class Folders {
    /**
     * The shortest time the list of buckets is trusted for a bucket it names; it is trusted for {@code metadata-ttl}
     * when that is longer, as a folder's listing is. A name it lacks is always asked again.
     */
    private static final Duration MIN_BUCKETS_TTL = Duration.ofSeconds(2);

    private final ObjectStore reader;
    private final Clock clock;
    private final BucketOperations buckets;
    private final Attrs attrs;
    private final LocalNames local;
    private final FolderListings listings;
    private final Map<Long, FolderHandle> handles = new ConcurrentHashMap<>();
    private final long bucketsTtlNanos;
    private volatile List<String> bucketNames;
    private volatile long bucketNamesAt;

    /** Listings are kept for {@code ttl} of {@code clock}'s time; subfolders are listed ahead on {@code ahead} (null: never). */
    Folders(ObjectStore reader, Clock clock, Duration ttl, Executor ahead, BucketOperations buckets, LocalWrites writeBack, Attrs attrs) {
        this.reader = reader;
        this.clock = clock;
        this.buckets = buckets;
        this.attrs = attrs;
        this.bucketsTtlNanos = (ttl.compareTo(MIN_BUCKETS_TTL) > 0 ? ttl : MIN_BUCKETS_TTL).toNanos();
        this.local = new LocalNames(writeBack);
        this.listings = new FolderListings(reader, clock, ttl, ahead, local);
    }

    /** Folders being listed now, ahead of a reader or for one. */
    int beingListed() {
        return listings.beingListed();
    }

    /**
     * What a listing of its folder says of {@code loc} (a key): a file with its metadata, or a folder (meta null);
     * null when no fresh listing names it. See {@link FolderListings#listed}.
     */
    FolderEntry listed(MountPath loc) throws IOException {
        return listings.listed(loc);
    }

    /**
     * Asks the store for its buckets once, as the first lookups will: the store's answer (and the client's first
     * connection) is ready before a reader comes, and one that cannot be reached is said at once. Null when it
     * answered, else why not.
     */
    String probe() {
        try {
            listBucketNames(clock.nanoTime());
            return null;
        } catch (IOException | RuntimeException e) {
            return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        }
    }

    boolean bucketExists(String bucket) throws IOException {
        long now = clock.nanoTime();
        List<String> names = bucketNames;
        if (names == null || now - bucketNamesAt > bucketsTtlNanos || !names.contains(bucket)) {
            names = listBucketNames(now);
        }
        return names.contains(bucket);
    }

    /** The store's buckets, asked now, kept as of {@code now}. */
    private List<String> listBucketNames(long now) throws IOException {
        List<String> names = buckets.listBuckets().stream().map(BucketOperations.Bucket::name).toList();
        bucketNames = names;
        bucketNamesAt = now;
        return names;
    }

    boolean isDir(MountPath loc) throws IOException {
        if (loc.key() == null) {
            return loc.isRoot() || bucketExists(loc.bucket());
        }
        if (local.isFolder(loc.bucket(), loc.key())) {
            return true;
        }
        if (!local.writesUnder(loc.bucket(), loc.prefix()).isEmpty()) {
            return true;
        }
        FolderEntry e = listed(loc);
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
    boolean emptyInStore(MountPath loc) throws IOException {
        ListPage page = reader.list(new ListRequest(loc.bucket(), loc.prefix(), "/", null, 1));
        return page.objects().isEmpty() && page.commonPrefixes().isEmpty();
    }

    void makeLocal(MountPath loc) {
        local.addFolder(loc.bucket(), loc.key());
        listings.changed(loc.bucket(), loc.key());
    }

    /** Forgets a folder made with mkdir; false when there was none. */
    boolean removeLocal(MountPath loc) {
        listings.changed(loc.bucket(), loc.key());
        return local.removeFolder(loc.bucket(), loc.key());
    }

    /** A file of {@code key} was written through write-back: listings show it until the store does. */
    void pending(ObjectKey key) {
        local.writing(key);
        listings.changed(key.bucket(), key.key());
    }

    /** {@code key} was deleted. */
    void deleted(ObjectKey key) {
        local.deleted(key);
        listings.changed(key.bucket(), key.key());
    }

    /** After a write, rename or delete of {@code key}: the folders its key implies are real now. */
    void written(ObjectKey key) {
        listings.changed(key.bucket(), key.key());
        local.written(key);
    }

    // ---- folder handles ---------------------------------------------------------------------------------

    void open(long id, MountPath loc) {
        handles.put(id, new FolderHandle(loc, reader, buckets, listings, local, attrs));
    }

    void release(long id) {
        handles.remove(id);
    }

    /** Fills the kernel's buffer from {@code offset} on; see {@link FuseOperations#readdir}. */
    int read(long id, DirFiller filler, long offset, int flags) throws IOException {
        FolderHandle h = handles.get(id);
        return h == null ? -Errnos.EBADF : h.read(filler, offset, flags);
    }
}
