/**
 * The folder store: {@link dev.ferry.store.file.FileObjectStore}, buckets as directories and objects as files
 * (written temp-fsync-rename through {@code TempFiles}, ETags from file identity), its {@code StagedUploads}
 * (multipart parts staged beside the objects) and its {@code Sidecars} (the attributes and ETag a file was
 * written with, believed only while the file is unchanged). Depends on {@code dev.ferry.store} and the JDK.
 */
package dev.ferry.store.file;
