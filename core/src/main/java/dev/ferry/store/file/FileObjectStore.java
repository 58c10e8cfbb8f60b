package dev.ferry.store.file;

import dev.ferry.store.BoundedInputStream;
import dev.ferry.store.BucketOperations;
import dev.ferry.store.ByteRange;
import dev.ferry.store.CompletedPart;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.MultipartOperations;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PendingUploads;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * An object store over a directory: each top-level folder is a bucket, each key a file below it, '/' separating
 * folders; a key below an object is no key ({@code a} and {@code a/b} cannot both be). Writes go to a temporary file
 * under {@code ROOT/.ferry-tmp} ({@link TempFiles}), are fsync'd and then moved into place atomically, so a reader
 * sees the old object or the new one, never a half-written one. An object written through this store has the ETag S3
 * would give it (the content MD5 in hex; for a multipart upload the MD5 of the parts' MD5s, then {@code -N}) and keeps
 * its attributes (content type, user metadata), both in a {@link Sidecars sidecar} that is believed only while the
 * file is the one it describes. Files dropped into the directory by other programs get an ETag derived from their
 * file's identity (inode, modification time, size), as web servers do for static files, so any rewrite changes it.
 *
 * <p>Multipart parts are staged under {@code ROOT/.ferry-uploads/<id>/} ({@link StagedUploads}), each found by
 * the ETag a client names for it; a completed upload leaves a marker, so a repeated CompleteMultipartUpload
 * answers the same ETag while the object is still the one it made.
 *
 * <p>Keys that a file system cannot hold as given (empty segments, {@code .} or {@code ..}, a trailing
 * '/') are refused with a fatal error; nothing outside {@code ROOT} is ever read or written.
 * Listing reads the folders under the prefix in key order, a folder at a time ({@link KeyWalk}), from where the page
 * starts: a page costs the folders it reaches.
 *
 * <p>Thread-safe: every operation is a file-system operation, atomic where it matters.
 */
public final class FileObjectStore implements ObjectStore, BucketOperations, MultipartOperations, PendingUploads {
    private static final String TMP_DIR = ".ferry-tmp";
    private static final String UPLOADS_DIR = ".ferry-uploads";
    private static final String META_DIR = ".ferry-meta";
    /** Times a write makes its folder again where concurrent deletes keep removing it (each removal needs a delete). */
    private static final int FOLDER_ATTEMPTS = 16;

    private final Path root;
    private final KeyFiles files;
    private final TempFiles temps;
    private final StagedUploads uploads;
    private final Sidecars sidecars;

    public FileObjectStore(Path root) throws IOException {
        this.root = Objects.requireNonNull(root, "root is null").toAbsolutePath().normalize();
        this.files = new KeyFiles(this.root, java.util.Set.of(TMP_DIR, UPLOADS_DIR, META_DIR), FOLDER_ATTEMPTS);
        Files.createDirectories(this.root);
        Path tmp = Files.createDirectories(this.root.resolve(TMP_DIR));
        this.temps = new TempFiles(tmp);
        this.uploads = new StagedUploads(Files.createDirectories(this.root.resolve(UPLOADS_DIR)), temps, new UploadDestination());
        this.sidecars = new Sidecars(this.root.resolve(META_DIR), tmp);
    }

    /** Where a completed upload's object goes: this store's keys. */
    private final class UploadDestination implements StagedUploads.Destination {
        @Override
        public void checkWritable(ObjectKey key) throws IOException {
            FileObjectStore.this.checkWritable(key);
        }

        @Override
        public ObjectMeta place(ObjectKey key, Path assembled, String etag, ObjectAttributes attributes) throws IOException {
            return moveIntoPlace(key, assembled, files.fileFor(key), etag, attributes);
        }

        @Override
        public ObjectMeta head(ObjectKey key) throws IOException {
            return FileObjectStore.this.head(key);
        }
    }

    public Path root() {
        return root;
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        Path file = files.fileFor(key);
        try {
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
            if (!attrs.isRegularFile()) {
                throw ObjectNotFoundException.of(key);
            }
            return meta(key, attrs);
        } catch (FileSystemException e) {
            throw noObjectThere(key, file, e);
        }
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        ObjectKey key = request.key();
        Path file = files.fileFor(key);
        FileChannel channel;
        try {
            channel = FileChannel.open(file, StandardOpenOption.READ);
        } catch (IOException e) {
            throw noObjectThere(key, file, e);
        }
        try {
            // Attributes of the open file: a concurrent replace moves a new inode in, ours stays consistent.
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
            if (!attrs.isRegularFile()) {
                throw ObjectNotFoundException.of(key); // a folder opens for reading, and fails only when read
            }
            ObjectMeta meta = meta(key, attrs);
            long size = channel.size();
            if (size != meta.size()) {
                // Replaced between open and stat: report the version we actually hold.
                meta = new ObjectMeta(key, size, etagOf(attrs) + "-r", null, meta.lastModified());
            }
            if (request.ifMatch() != null && !request.ifMatch().equals(meta.etag())) {
                throw new StoreException(StoreException.Kind.PRECONDITION_FAILED, 412,
                        "object changed: " + key + " has ETag " + meta.etag() + ", not " + request.ifMatch(), null);
            }
            ByteRange range;
            if (request.range() == null) {
                range = size == 0 ? null : ByteRange.of(0, size);
            } else {
                range = request.range().clip(size);
                if (range == null) {
                    throw new StoreException(StoreException.Kind.FATAL, 416,
                            "range " + request.range().toHttpHeader() + " starts past the end of " + key + " (" + size + " bytes)", null);
                }
            }
            channel.position(range == null ? 0 : range.offset());
            InputStream in = new BoundedInputStream(Channels.newInputStream(channel), range == null ? 0 : range.length());
            return new ObjectContent(meta, range, in);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        Path bucketDir = files.bucketDir(request.bucket());
        if (!Files.isDirectory(bucketDir)) {
            throw new ObjectNotFoundException("no such bucket: " + request.bucket());
        }
        String prefix = request.prefix();
        int slash = prefix.lastIndexOf('/');
        Path start = slash < 0 ? bucketDir : bucketDir.resolve(prefix.substring(0, slash));
        if (!start.normalize().startsWith(bucketDir) || !Files.isDirectory(start)) {
            return new ListPage(List.of(), List.of(), null);
        }
        List<ObjectMeta> objects = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        String after = request.continuationToken() != null ? request.continuationToken() : request.startAfter();
        String last = null;
        boolean truncated = false;
        KeyWalk keys = new KeyWalk(bucketDir, start, prefix, after);
        while (walkHasNext(keys)) {
            String key = keys.next();
            String entry = key;
            boolean isPrefix = false;
            if (request.delimiter() != null) {
                int d = key.indexOf(request.delimiter(), prefix.length());
                if (d >= 0) {
                    entry = key.substring(0, d + request.delimiter().length());
                    isPrefix = true;
                }
            }
            if (isPrefix && !prefixes.isEmpty() && prefixes.get(prefixes.size() - 1).equals(entry)) {
                continue;
            }
            if (isPrefix && after != null && after.startsWith(entry)) {
                continue; // this common prefix was returned on an earlier page
            }
            if (objects.size() + prefixes.size() == request.maxKeys()) {
                truncated = true;
                break;
            }
            if (isPrefix) {
                prefixes.add(entry);
                last = entry + Character.MAX_VALUE; // resume after every key under this prefix
                keys.skipTo(last);
            } else {
                try {
                    objects.add(meta(ObjectKey.of(request.bucket(), key),
                            Files.readAttributes(bucketDir.resolve(key), BasicFileAttributes.class)));
                } catch (NoSuchFileException e) {
                    continue; // deleted while listing
                }
                last = key;
            }
        }
        return new ListPage(objects, prefixes, truncated ? last : null);
    }

    private static boolean walkHasNext(KeyWalk keys) throws IOException {
        try {
            return keys.hasNext();
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        Path file = files.fileFor(key);
        TempFiles.Written temp = temps.write(body);
        return moveIntoPlace(key, temp.file(), file, temp.md5(), body.attributes());
    }

    /**
     * Refuses now, with the error a write would get, a write of {@code key} that this store could not
     * take: a missing bucket, a key a file system cannot hold, a key whose parent is an object or that other
     * keys use as a folder. A write-back daemon checks before acknowledging what it would upload later.
     */
    public void checkWritable(ObjectKey key) throws IOException {
        Path file = files.fileFor(key);
        requireBucket(key.bucket());
        if (Files.isDirectory(file)) {
            throw KeyFiles.unstorable(key, "other keys already use it as a folder");
        }
        if (files.objectAbove(key, file)) {
            throw KeyFiles.unstorable(key, "a parent folder of it is already an object");
        }
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        if (!Files.isDirectory(files.bucketDir(key.bucket()))) { // deleting a key that is not there is fine, in a bucket that is not there not
            throw new ObjectNotFoundException("no such bucket: " + key.bucket(), "NoSuchBucket", null);
        }
        Path file = files.fileFor(key);
        if (files.objectAbove(key, file)) {
            return; // no key lies under an object here
        }
        try {
            if (Files.isRegularFile(file)) {
                Files.deleteIfExists(file);
            }
        } catch (NoSuchFileException e) {
            return;
        }
        sidecars.delete(key); // after the file: a sidecar left by a crash describes no file
        Path bucketDir = files.bucketDir(key.bucket());
        for (Path dir = file.getParent(); dir != null && !dir.equals(bucketDir) && dir.startsWith(bucketDir); dir = dir.getParent()) {
            try {
                Files.delete(dir);
            } catch (DirectoryNotEmptyException | NoSuchFileException e) {
                break;
            }
        }
    }

    // ---- multipart uploads: staged beside the objects (StagedUploads) --------------------------------------

    @Override
    public MultipartUpload startMultipart(ObjectKey key, ObjectAttributes attributes) throws IOException {
        return uploads.start(key, attributes);
    }

    @Override
    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        return uploads.uploadPart(upload, partNumber, body);
    }

    /** The sizes of the named parts of an upload in progress, in order (checked as {@link #completeMultipart} does). */
    public List<Long> partSizes(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        return uploads.partSizes(upload, parts);
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        return uploads.complete(upload, parts);
    }

    @Override
    public List<Upload> listUploads(String bucket, String prefix) throws IOException {
        return uploads.list(bucket, prefix);
    }

    @Override
    public int expireUploads(Instant cutoff) throws IOException {
        return uploads.expire(cutoff);
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        uploads.abort(upload);
    }

    // ---- buckets -----------------------------------------------------------------------------------------

    @Override
    public List<Bucket> listBuckets() throws IOException {
        List<Bucket> out = new ArrayList<>();
        try (Stream<Path> children = Files.list(root)) {
            for (Path p : children.filter(Files::isDirectory).filter(p -> !p.getFileName().toString().startsWith(".")).sorted().toList()) {
                // the folder's birth time where the file system keeps one (statx), else its last change
                out.add(new Bucket(p.getFileName().toString(), Files.readAttributes(p, BasicFileAttributes.class).creationTime().toInstant()));
            }
        }
        return out;
    }

    /**
     * Removes the bucket's folder when no file is under it. Only folders are deleted, never a file: an object
     * written meanwhile makes its folder's deletion fail, and the answer is BucketNotEmpty.
     */
    @Override
    public void deleteBucket(String bucket) throws IOException {
        Path dir = files.bucketDir(bucket);
        if (!Files.isDirectory(dir)) {
            throw new ObjectNotFoundException("no such bucket: " + bucket, "NoSuchBucket", null);
        }
        List<Path> folders;
        try (Stream<Path> walk = Files.walk(dir)) {
            List<Path> all = walk.toList();
            if (all.stream().anyMatch(p -> !Files.isDirectory(p))) {
                throw notEmpty(bucket);
            }
            folders = all.stream().sorted(Comparator.reverseOrder()).toList();
        }
        for (Path p : folders) {
            try {
                Files.delete(p);
            } catch (DirectoryNotEmptyException e) {
                throw notEmpty(bucket);
            } catch (NoSuchFileException e) {
                // removed meanwhile (an empty parent of a deleted key)
            }
        }
    }

    private static StoreException notEmpty(String bucket) {
        return new StoreException(StoreException.Kind.FATAL, 409, "BucketNotEmpty", "bucket " + bucket
                + " is not empty: delete its objects first", null);
    }

    @Override
    public void createBucket(String bucket) throws IOException {
        ObjectKey.validateBucket(bucket);
        Files.createDirectories(root.resolve(bucket));
    }

    private void requireBucket(String bucket) throws IOException {
        if (!Files.isDirectory(files.bucketDir(bucket))) {
            throw new ObjectNotFoundException("no such bucket: " + bucket);
        }
    }

    private ObjectNotFoundException notFound(ObjectKey key) {
        if (!Files.isDirectory(root.resolve(key.bucket()))) {
            return new ObjectNotFoundException("no such bucket: " + key.bucket());
        }
        return ObjectNotFoundException.of(key);
    }

    /**
     * Moves an fsync'd temporary file to the key, its sidecar (ETag, attributes) first. A delete that empties a
     * folder removes it ({@link #delete}); one that does so while this makes the folder or moves the file in (a
     * rename: the new name's write, the old name's delete) takes the folder away under it, and the folder is made
     * again, a few times at most. Only a parent that is an object refuses the key.
     */
    private ObjectMeta moveIntoPlace(ObjectKey key, Path temp, Path file, String etag, ObjectAttributes attributes) throws IOException {
        try {
            requireBucket(key.bucket());
            boolean described = false;
            for (int attempt = 1; ; attempt++) {
                files.makeParents(key, file);
                if (Files.isDirectory(file)) {
                    throw KeyFiles.unstorable(key, "other keys already use it as a folder");
                }
                if (!described) {
                    sidecars.write(key, Sidecars.identity(Files.readAttributes(temp, BasicFileAttributes.class)), etag, attributes);
                    described = true;
                }
                try {
                    try {
                        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    } catch (AtomicMoveNotSupportedException e) {
                        Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
                    }
                } catch (NoSuchFileException e) {
                    if (attempt < FOLDER_ATTEMPTS && Files.exists(temp) && !Files.isDirectory(file.getParent())) {
                        continue; // a delete removed the folder between its making and the move
                    }
                    throw e;
                }
                return meta(key, Files.readAttributes(file, BasicFileAttributes.class));
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /**
     * What reading {@code file} failing with {@code e} means: not found where nothing is there, a folder is, or an
     * object above it is (ENOTDIR, a plain FileSystemException before JDK 25); else {@code e} itself.
     */
    private IOException noObjectThere(ObjectKey key, Path file, IOException e) {
        return e instanceof NoSuchFileException || Files.isDirectory(file) || files.objectAbove(key, file) ? notFound(key) : e;
    }

    /** An object's metadata: from its sidecar while the sidecar describes this file, else from the file's identity. */
    private ObjectMeta meta(ObjectKey key, BasicFileAttributes attrs) throws IOException {
        Sidecars.Entry s = sidecars.read(key, attrs);
        if (s == null) {
            return new ObjectMeta(key, attrs.size(), etagOf(attrs), null, attrs.lastModifiedTime().toInstant());
        }
        return new ObjectMeta(key, attrs.size(), s.etag(), null, attrs.lastModifiedTime().toInstant(), s.attributes());
    }

    /** ETag from file identity: changes whenever the file is replaced or rewritten. */
    static String etagOf(BasicFileAttributes attrs) {
        long h = 0xcbf29ce484222325L;
        String identity = String.valueOf(attrs.fileKey()) + "/" + attrs.lastModifiedTime().toInstant() + "/" + attrs.size();
        for (int i = 0; i < identity.length(); i++) {
            h ^= identity.charAt(i);
            h *= 0x100000001b3L;
        }
        return HexFormat.of().toHexDigits(h) + "-" + Long.toHexString(attrs.size());
    }
}
