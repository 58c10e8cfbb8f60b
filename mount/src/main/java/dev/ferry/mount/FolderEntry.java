package dev.ferry.mount;

import dev.ferry.store.ObjectMeta;

/** An entry of a folder's listing: a file, with its metadata, or a folder ({@code meta} null). */
record FolderEntry(String name, ObjectMeta meta) {
}
