package dev.ferry.mount;

import dev.ferry.store.ObjectKey;
import dev.ferry.tier.LocalWrites;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;

/**
 * Names that exist only in the mount so far, which folder listings show beside the store's: folders made with
 * {@code mkdir} (S3 has no empty folders; one lasts until a file is written under it or the store lists it) and
 * files written through write-back and not uploaded yet. Both are kept as "bucket/key".
 *
 * <p>Thread-safe: concurrent sets.
 */
final class LocalNames {
    /** Null with write-through: no file is ever only here. */
    private final LocalWrites writeBack;
    private final Set<String> folders = ConcurrentHashMap.newKeySet();
    /** Sorted, so that those under a prefix are a range. */
    private final NavigableSet<String> writes = new ConcurrentSkipListSet<>();

    LocalNames(LocalWrites writeBack) {
        this.writeBack = writeBack;
    }

    boolean isFolder(String bucket, String key) {
        return folders.contains(bucket + "/" + key);
    }

    void addFolder(String bucket, String key) {
        folders.add(bucket + "/" + key);
    }

    /** Forgets a folder made here (the store lists it now, or it was removed); false when there was none. */
    boolean removeFolder(String bucket, String key) {
        return folders.remove(bucket + "/" + key);
    }

    /** The names of the folders made here directly in {@code prefix} of {@code bucket}. */
    List<String> foldersIn(String bucket, String prefix) {
        String in = bucket + "/" + prefix;
        List<String> names = new ArrayList<>();
        for (String f : folders) {
            if (f.startsWith(in) && f.indexOf('/', in.length()) < 0) {
                names.add(f.substring(in.length()));
            }
        }
        return names;
    }

    /** A file of {@code key} was written through write-back: it is here until uploaded. */
    void writing(ObjectKey key) {
        writes.add(key.bucket() + "/" + key.key());
    }

    void deleted(ObjectKey key) {
        writes.remove(key.bucket() + "/" + key.key());
    }

    /** After a write, rename or delete of {@code key}: the folders its key implies are real now. */
    void written(ObjectKey key) {
        String k = key.key();
        for (int i = k.indexOf('/'); i >= 0; i = k.indexOf('/', i + 1)) {
            folders.remove(key.bucket() + "/" + k.substring(0, i));
        }
    }

    /** Keys under {@code prefix} written here and still held locally by write-back (dropping those uploaded since). */
    List<ObjectKey> writesUnder(String bucket, String prefix) {
        String from = bucket + "/" + prefix;
        List<ObjectKey> keys = new ArrayList<>();
        for (String k : writes.subSet(from, true, from + Character.MAX_VALUE, false)) {
            ObjectKey key = ObjectKey.of(bucket, k.substring(bucket.length() + 1));
            if (writeBack.pending(key)) {
                keys.add(key);
            } else {
                writes.remove(k); // uploaded: the store lists it now
            }
        }
        return keys;
    }
}
