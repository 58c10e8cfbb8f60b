package dev.ferry.store.file;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Set;

/**
 * Where a key's file lies under a {@link FileObjectStore}'s root, and the folders above it: a key a file system
 * cannot hold as given (an empty segment, {@code .} or {@code ..}, the store's own folders, a segment over 255 bytes)
 * or that would leave its bucket is refused; a key below an object is no key. Thread-safe (immutable; the folders
 * are made with file-system operations that tolerate concurrent deletes).
 */
final class KeyFiles {
    private final Path root;
    private final Set<String> reserved;
    private final int folderAttempts;

    /** {@code reserved}: the store's own folder names, never a key's segment; {@code folderAttempts}: see {@link #makeParents}. */
    KeyFiles(Path root, Set<String> reserved, int folderAttempts) {
        this.root = root;
        this.reserved = Set.copyOf(reserved);
        this.folderAttempts = folderAttempts;
    }

    Path bucketDir(String bucket) {
        ObjectKey.validateBucket(bucket);
        return root.resolve(bucket);
    }

    /** The file of a key; refuses keys a file system cannot hold or that would leave the root. */
    Path fileFor(ObjectKey key) throws StoreException {
        Path bucketDir = bucketDir(key.bucket());
        String k = key.key();
        if (k.startsWith("/") || k.endsWith("/") || k.contains("//") || k.contains("\\")) {
            throw unstorable(key, "it has an empty path segment or a backslash");
        }
        for (String segment : k.split("/")) {
            if (segment.equals(".") || segment.equals("..") || reserved.contains(segment)) {
                throw unstorable(key, "it has a '" + segment + "' segment");
            }
            if (segment.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 255) {
                throw unstorable(key, "a path segment is longer than 255 bytes");
            }
        }
        Path file = bucketDir.resolve(k).normalize();
        if (!file.startsWith(bucketDir) || file.equals(bucketDir)) {
            throw unstorable(key, "it resolves outside its bucket");
        }
        return file;
    }

    static StoreException unstorable(ObjectKey key, String why) {
        return new StoreException(StoreException.Kind.FATAL, 400, "key cannot be stored in a file system store because " + why + ": " + key, null);
    }

    /** Makes the folders above {@code file}, again where a delete removes one as it is made. */
    void makeParents(ObjectKey key, Path file) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                Files.createDirectories(file.getParent());
                return;
            } catch (FileSystemException e) {
                // createDirectories met an object above (a name that is no folder, or ENOTDIR further up), or a
                // delete removed a folder between its looks (FileAlreadyExists, NoSuchFile): then it tries again
                boolean raced = e instanceof FileAlreadyExistsException || e instanceof NoSuchFileException;
                if (objectAbove(key, file) || (e instanceof FileAlreadyExistsException && attempt == folderAttempts)) {
                    throw unstorable(key, "a parent folder of it is already an object");
                } else if (!raced || attempt == folderAttempts) {
                    throw e;
                }
            }
        }
    }

    /** Whether a folder above {@code file}, inside its bucket, is an object. */
    boolean objectAbove(ObjectKey key, Path file) {
        Path bucketDir = bucketDir(key.bucket());
        for (Path dir = file.getParent(); dir != null && !dir.equals(bucketDir); dir = dir.getParent()) {
            if (Files.isRegularFile(dir)) {
                return true;
            }
        }
        return false;
    }
}
