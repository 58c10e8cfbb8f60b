package dev.ferry.mount;

import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import java.io.IOException;
import java.util.List;

/**
 * A folder's listing one LIST page at a time, as the mount's entries: subfolders (common prefixes) and files (objects),
 * names a path cannot hold left out. A subfolder made with mkdir that a listing names is real from then on. Thread-safe.
 */
final class FolderPages {
    private final ObjectStore reader;
    private final LocalNames local;

    FolderPages(ObjectStore reader, LocalNames local) {
        this.reader = reader;
        this.local = local;
    }

    /** Lists one page of {@code prefix} from {@code token} (null: the first), its entries added to {@code entries}; the next page's token or null. */
    String list(String bucket, String prefix, String token, List<FolderEntry> entries) throws IOException {
        ListPage p = reader.list(new ListRequest(bucket, prefix, "/", token, ListRequest.DEFAULT_MAX_KEYS));
        for (String cp : p.commonPrefixes()) {
            String name = cp.substring(prefix.length(), cp.length() - 1);
            if (usable(name)) {
                entries.add(new FolderEntry(name, null));
                local.removeFolder(bucket, cp.substring(0, cp.length() - 1)); // made with mkdir, listed now: real
            }
        }
        for (ObjectMeta m : p.objects()) {
            String name = m.key().key().substring(prefix.length());
            if (usable(name)) {
                entries.add(new FolderEntry(name, m));
            }
        }
        return p.nextToken();
    }

    /** Whether a path can hold {@code name} as one of its parts. */
    static boolean usable(String name) {
        return !name.isEmpty() && !name.equals(".") && !name.equals("..") && name.indexOf('/') < 0;
    }
}
