package dev.ferry.mount;

import dev.ferry.store.ObjectMeta;

/** An entry of a folder's listing: a file, with its metadata, or a folder ({@code meta} null). */
record FolderEntry(String name, ObjectMeta meta) {
    /** Whether a path can hold {@code name} as one of its parts. */
    static boolean usable(String name) {
        return !name.isEmpty() && !name.equals(".") && !name.equals("..") && name.indexOf('/') < 0;
    }
}
