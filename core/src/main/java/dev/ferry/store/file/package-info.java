/**
 * The folder store: {@link dev.ferry.store.file.FileObjectStore}, buckets as directories and objects as files
 * (written temp-fsync-rename, ETags from file identity, multipart parts staged beside them), and its
 * {@code Sidecars} (the attributes and ETag a file was written with, believed only while the file is unchanged).
 * Depends on {@code dev.ferry.store} and the JDK.
 */
package dev.ferry.store.file;
