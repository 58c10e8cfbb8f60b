/**
 * {@code ferry mount}: the local tier as a POSIX file system through FUSE (jfuse over libfuse3, Java 22+).
 * Buckets are top-level folders, prefixes folders, objects files; reads go through the local tier
 * (through the node's door, {@code NodeStores}) pinned to the ETag a file was opened at, writes through write-back. {@code Mount}
 * builds the chain and mounts; {@code FerryFs} answers libfuse and hands each operation to {@code Folders}
 * (folders: the listings kept as metadata, {@code FolderListings}; open folders, {@code FolderHandle}; names
 * only the mount has so far, {@code LocalNames}), {@code Reads} (version-pinned reads) or {@code Writes}
 * (spooled writes, truncate, delete, rename); {@code Errnos} turns failures into errnos. Depends on core, s3 and jfuse; nothing in core depends
 * on this package.
 */
package dev.ferry.mount;
