package dev.ferry.store.file;

import dev.ferry.store.BoundedInputStream;
import dev.ferry.store.BucketOperations;
import dev.ferry.store.ByteRange;
import dev.ferry.store.Checksum;
import dev.ferry.store.CompletedPart;
import dev.ferry.store.Etags;
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
import dev.ferry.store.Parts;
import dev.ferry.store.PendingUploads;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * An object store over a directory: each top-level folder is a bucket, each key a file below it, '/'
 * separating folders. Later the shared-file-system tier.
 *
 * <p>Writes go to a temporary file under {@code ROOT/.ferry-tmp}, are fsync'd and then moved into place
 * atomically, so a reader sees the old object or the new one, never a half-written one. An object written
 * through this store has the ETag S3 would give it (the content MD5 in hex; for a multipart upload the MD5 of
 * the parts' MD5s, then {@code -N}) and keeps its attributes (content type, user metadata), both in a
 * {@link Sidecars sidecar} that is believed only while the file is the one it describes. Files dropped into
 * the directory by other programs get an ETag derived from their file's identity (inode, modification time,
 * size), as web servers do for static files, so any rewrite changes it.
 *
 * <p>Multipart parts are staged under {@code ROOT/.ferry-uploads/<id>/} as {@code <n>-<md5>}, so a part is
 * found by the ETag a client names for it, never another upload of the same number; every part but the last
 * must be at least 5 MiB ({@code EntityTooSmall}). A completed upload leaves a marker, so a repeated
 * CompleteMultipartUpload answers the same ETag while the object is still the one it made.
 *
 * <p>Keys that a file system cannot hold as given (empty segments, {@code .} or {@code ..}, a trailing
 * '/') are refused with a fatal error; nothing outside {@code ROOT} is ever read or written.
 * Listing walks the folder under the prefix and sorts: fine for thousands of keys per prefix, not millions.
 *
 * <p>Thread-safe: every operation is a file-system operation, atomic where it matters.
 */
public final class FileObjectStore implements ObjectStore, BucketOperations, MultipartOperations, PendingUploads {
    private static final String TMP_DIR = ".ferry-tmp";
    private static final String UPLOADS_DIR = ".ferry-uploads";
    private static final String META_DIR = ".ferry-meta";
    private static final String COMPLETED = "completed";
    private static final String ATTRIBUTES = "attributes";

    private final Path root;
    private final Path tmp;
    private final Path uploads;
    private final Sidecars sidecars;

    public FileObjectStore(Path root) throws IOException {
        this.root = Objects.requireNonNull(root, "root is null").toAbsolutePath().normalize();
        Files.createDirectories(this.root);
        this.tmp = Files.createDirectories(this.root.resolve(TMP_DIR));
        this.uploads = Files.createDirectories(this.root.resolve(UPLOADS_DIR));
        this.sidecars = new Sidecars(this.root.resolve(META_DIR), tmp);
    }

    public Path root() {
        return root;
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        Path file = fileFor(key);
        try {
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
            if (!attrs.isRegularFile()) {
                throw ObjectNotFoundException.of(key);
            }
            return meta(key, attrs);
        } catch (NoSuchFileException | NotDirectoryException e) {
            throw notFound(key);
        }
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        ObjectKey key = request.key();
        Path file = fileFor(key);
        FileChannel channel;
        try {
            channel = FileChannel.open(file, StandardOpenOption.READ);
        } catch (NoSuchFileException | NotDirectoryException e) {
            throw notFound(key);
        } catch (IOException e) {
            if (Files.isDirectory(file)) {
                throw notFound(key);
            }
            throw e;
        }
        try {
            // Attributes of the open file: a concurrent replace moves a new inode in, ours stays consistent.
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
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
        Path bucketDir = bucketDir(request.bucket());
        if (!Files.isDirectory(bucketDir)) {
            throw new ObjectNotFoundException("no such bucket: " + request.bucket());
        }
        String prefix = request.prefix();
        int slash = prefix.lastIndexOf('/');
        Path start = slash < 0 ? bucketDir : bucketDir.resolve(prefix.substring(0, slash));
        if (!start.normalize().startsWith(bucketDir) || !Files.isDirectory(start)) {
            return new ListPage(List.of(), List.of(), null);
        }
        TreeSet<String> keys = new TreeSet<>();
        try (Stream<Path> walk = Files.walk(start)) {
            walk.filter(Files::isRegularFile).forEach(p -> {
                String key = bucketDir.relativize(p).toString().replace(p.getFileSystem().getSeparator(), "/");
                if (key.startsWith(prefix)) {
                    keys.add(key);
                }
            });
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
        List<ObjectMeta> objects = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        String after = request.continuationToken();
        String last = null;
        boolean truncated = false;
        for (String key : after == null ? keys : keys.tailSet(after, false)) {
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

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        Path file = fileFor(key);
        Written temp = writeTemp(body);
        return moveIntoPlace(key, temp.file(), file, temp.md5(), body.attributes());
    }

    /**
     * Refuses now, with the error a write would get, a write of {@code key} that this store could not
     * take: a missing bucket, a key a file system cannot hold, a key whose parent is an object or that other
     * keys use as a folder. A write-back daemon checks before acknowledging what it would upload later.
     */
    public void checkWritable(ObjectKey key) throws IOException {
        Path file = fileFor(key);
        requireBucket(key.bucket());
        if (Files.isDirectory(file)) {
            throw unstorable(key, "other keys already use it as a folder");
        }
        Path bucketDir = bucketDir(key.bucket());
        for (Path dir = file.getParent(); dir != null && !dir.equals(bucketDir); dir = dir.getParent()) {
            if (Files.isRegularFile(dir)) {
                throw unstorable(key, "a parent folder of it is already an object");
            }
        }
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        if (!Files.isDirectory(bucketDir(key.bucket()))) { // deleting a key that is not there is fine, in a bucket that is not there not
            throw new ObjectNotFoundException("no such bucket: " + key.bucket(), "NoSuchBucket", null);
        }
        Path file = fileFor(key);
        try {
            if (Files.isRegularFile(file)) {
                Files.deleteIfExists(file);
            }
        } catch (NoSuchFileException e) {
            return;
        }
        sidecars.delete(key); // after the file: a sidecar left by a crash describes no file
        Path bucketDir = bucketDir(key.bucket());
        for (Path dir = file.getParent(); dir != null && !dir.equals(bucketDir) && dir.startsWith(bucketDir); dir = dir.getParent()) {
            try {
                Files.delete(dir);
            } catch (DirectoryNotEmptyException | NoSuchFileException e) {
                break;
            }
        }
    }

    @Override
    public MultipartUpload startMultipart(ObjectKey key, ObjectAttributes attributes) throws IOException {
        checkWritable(key); // the key and the bucket now, not at completion
        String id = UUID.randomUUID().toString();
        Path dir = Files.createDirectories(uploads.resolve(id));
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
            attributes.writeTo(out);
        }
        writeSmall(dir.resolve(ATTRIBUTES), bytes.toByteArray());
        writeSmall(dir.resolve("key"), (key.bucket() + "\n" + key.key()).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return new MultipartUpload(key, id);
    }

    /** Writes a small file whole: temporary name, fsync, rename. */
    private void writeSmall(Path target, byte[] bytes) throws IOException {
        Path temp = tmp.resolve(UUID.randomUUID() + ".part");
        try {
            try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    @Override
    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        Path dir = uploadDir(upload);
        if (partNumber < 1 || partNumber > CompletedPart.MAX_PARTS) {
            throw new StoreException(StoreException.Kind.FATAL, 400,
                    "part number must be 1 to " + CompletedPart.MAX_PARTS + ": " + partNumber, null);
        }
        Written temp = writeTemp(body);
        Path part = dir.resolve(partNumber + "-" + temp.md5());
        Files.move(temp.file(), part, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (Stream<Path> others = Files.list(dir)) { // an earlier upload of this number is replaced, as in S3
            for (Path other : others.toList()) {
                if (other.getFileName().toString().startsWith(partNumber + "-") && !other.equals(part)) {
                    Files.deleteIfExists(other);
                }
            }
        }
        return new CompletedPart(partNumber, temp.md5());
    }

    /** The sizes of the named parts of an upload in progress, in order (checked as {@link #completeMultipart} does). */
    public List<Long> partSizes(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        Path dir = uploadDir(upload);
        List<Long> sizes = new ArrayList<>(parts.size());
        for (CompletedPart p : parts) {
            sizes.add(partSize(upload, dir, p));
        }
        return sizes;
    }

    private static long partSize(MultipartUpload upload, Path dir, CompletedPart p) throws IOException {
        try {
            return Files.size(dir.resolve(p.partNumber() + "-" + p.etag()));
        } catch (NoSuchFileException e) {
            throw new StoreException(StoreException.Kind.FATAL, 400, "InvalidPart", "part " + p.partNumber() + " of "
                    + upload.key() + " with ETag " + p.etag() + " was never uploaded", null);
        }
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        Path dir = uploadDir(upload);
        Path completed = dir.resolve(COMPLETED);
        if (Files.isRegularFile(completed)) {
            return completedAgain(upload, Files.readString(completed).trim());
        }
        if (parts.isEmpty()) {
            throw new StoreException(StoreException.Kind.FATAL, 400, "multipart upload of " + upload.key() + " has no parts", null);
        }
        int previous = 0;
        for (CompletedPart p : parts) {
            if (p.partNumber() <= previous) {
                throw new StoreException(StoreException.Kind.FATAL, 400,
                        "parts of " + upload.key() + " must be in ascending order: " + p.partNumber() + " after " + previous, null);
            }
            previous = p.partNumber();
        }
        List<Long> sizes = partSizes(upload, parts);
        for (int i = 0; i < sizes.size() - 1; i++) {
            if (sizes.get(i) < CompletedPart.MIN_SIZE) {
                throw new StoreException(StoreException.Kind.FATAL, 400, "EntityTooSmall", "part " + parts.get(i).partNumber()
                        + " of " + upload.key() + " is " + sizes.get(i) + " bytes; every part but the last must be at least 5 MiB", null);
            }
        }
        ObjectAttributes attributes;
        try (java.io.DataInputStream in = new java.io.DataInputStream(Files.newInputStream(dir.resolve(ATTRIBUTES)))) {
            attributes = ObjectAttributes.readFrom(in);
        } catch (NoSuchFileException e) {
            attributes = ObjectAttributes.NONE; // an upload started before attributes were kept
        }
        Summed summed = checksumOf(upload, dir, parts, Checksum.declaredIn(attributes));
        if (summed != null) {
            attributes = summed.object().applyTo(attributes);
        }
        // for a read of one part (GET ?partNumber=N) and GetObjectAttributes' list of them
        attributes = Parts.applyTo(attributes, sizes, summed == null ? null : summed.parts());
        Path temp = tmp.resolve(UUID.randomUUID() + ".part");
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (CompletedPart p : parts) {
                try (FileChannel in = FileChannel.open(dir.resolve(p.partNumber() + "-" + p.etag()), StandardOpenOption.READ)) {
                    long size = in.size();
                    for (long done = 0; done < size; ) {
                        done += in.transferTo(done, size - done, out);
                    }
                }
            }
            out.force(true);
        } catch (IOException e) {
            Files.deleteIfExists(temp);
            throw e;
        }
        String etag = Etags.multipart(parts.stream().map(CompletedPart::etag).toList());
        ObjectMeta meta = moveIntoPlace(upload.key(), temp, fileFor(upload.key()), etag, attributes);
        // the upload is kept as a marker (its parts go), so that a retried Complete gets the same answer
        writeSmall(completed, etag.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        try (Stream<Path> staged = Files.list(dir)) {
            for (Path f : staged.toList()) {
                if (!f.equals(completed) && !f.getFileName().toString().equals("key")) {
                    Files.deleteIfExists(f);
                }
            }
        }
        return meta;
    }

    /**
     * The checksum S3 would give the object the parts make, and each part's, when its upload declared an algorithm (else null),
     * reading each part once: COMPOSITE (the checksum of the parts' checksums, {@code -N}) or FULL_OBJECT (of
     * all the bytes). A checksum the client named for a part must be that part's: else 400 InvalidPart.
     */
    /** An upload's checksum, and its parts'. */
    private record Summed(Checksum object, List<Checksum> parts) {
    }

    private static Summed checksumOf(MultipartUpload upload, Path dir, List<CompletedPart> parts, Checksum declared) throws IOException {
        if (declared == null && parts.stream().allMatch(p -> p.checksum() == null)) {
            return null;
        }
        Checksum.Digest whole = declared != null && declared.type() == Checksum.Type.FULL_OBJECT ? declared.algorithm().digest() : null;
        List<Checksum> sums = new ArrayList<>(parts.size());
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(1 << 20);
        for (CompletedPart p : parts) {
            Checksum.Algorithm algorithm = declared != null ? declared.algorithm() : p.checksum() != null ? p.checksum().algorithm() : null;
            if (algorithm == null) {
                continue;
            }
            if (p.checksum() != null && p.checksum().algorithm() != algorithm) {
                throw new StoreException(StoreException.Kind.FATAL, 400, "InvalidPart", "part " + p.partNumber()
                        + " names a " + p.checksum().algorithm() + " checksum; the upload declared " + algorithm, null);
            }
            Checksum.Digest d = algorithm.digest();
            try (FileChannel in = FileChannel.open(dir.resolve(p.partNumber() + "-" + p.etag()), StandardOpenOption.READ)) {
                while (in.read(buf) >= 0) {
                    buf.flip();
                    if (whole != null) {
                        whole.update(buf.duplicate());
                    }
                    d.update(buf);
                    buf.clear();
                }
            }
            Checksum mine = Checksum.full(algorithm, d.finish());
            if (p.checksum() != null && !p.checksum().value().equals(mine.value())) {
                throw new StoreException(StoreException.Kind.FATAL, 400, "InvalidPart", "part " + p.partNumber()
                        + ": its " + algorithm + " checksum is " + mine.value() + ", not " + p.checksum().value(), null);
            }
            sums.add(mine);
        }
        if (declared == null) {
            return null;
        }
        return new Summed(whole != null ? Checksum.full(declared.algorithm(), whole.finish()) : Checksum.composite(declared.algorithm(), sums),
                sums);
    }

    /** A Complete of an upload already completed: its object, while it is still the one the upload made. */
    private ObjectMeta completedAgain(MultipartUpload upload, String etag) throws IOException {
        try {
            ObjectMeta now = head(upload.key());
            if (now.etag().equals(etag)) {
                return now;
            }
        } catch (ObjectNotFoundException e) {
            // deleted since: the upload's object is gone
        }
        throw new StoreException(StoreException.Kind.NOT_FOUND, 404, "NoSuchUpload", "no such upload: " + upload.uploadId()
                + " was completed and its object " + upload.key() + " has been replaced or deleted since", null);
    }

    @Override
    public List<Upload> listUploads(String bucket, String prefix) throws IOException {
        List<Upload> out = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(uploads)) {
            for (Path dir : dirs.toList()) {
                try {
                    if (Files.exists(dir.resolve(COMPLETED))) {
                        continue;
                    }
                    String[] k = Files.readString(dir.resolve("key")).split("\n", 2);
                    if (k.length == 2 && k[0].equals(bucket) && k[1].startsWith(prefix)) {
                        out.add(new Upload(ObjectKey.of(k[0], k[1]), dir.getFileName().toString(),
                                Files.getLastModifiedTime(dir.resolve("key")).toInstant()));
                    }
                } catch (NoSuchFileException | NotDirectoryException e) {
                    // completed, aborted or being started meanwhile
                }
            }
        }
        out.sort(Comparator.comparing((Upload u) -> u.key().key()).thenComparing(Upload::initiated));
        return out;
    }

    @Override
    public int expireUploads(java.time.Instant cutoff) throws IOException {
        int n = 0;
        try (Stream<Path> dirs = Files.list(uploads)) {
            for (Path dir : dirs.toList()) {
                try {
                    if (Files.getLastModifiedTime(dir.resolve("key")).toInstant().isBefore(cutoff)) {
                        deleteRecursively(dir);
                        n++;
                    }
                } catch (NoSuchFileException | NotDirectoryException e) {
                    if (Files.isDirectory(dir) && Files.getLastModifiedTime(dir).toInstant().isBefore(cutoff)) {
                        deleteRecursively(dir); // a start that crashed before its key file
                    }
                }
            }
        }
        return n;
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        deleteRecursively(uploadDir(upload));
    }

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
        Path dir = bucketDir(bucket);
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

    private Path bucketDir(String bucket) {
        ObjectKey.validateBucket(bucket);
        return root.resolve(bucket);
    }

    private void requireBucket(String bucket) throws IOException {
        if (!Files.isDirectory(bucketDir(bucket))) {
            throw new ObjectNotFoundException("no such bucket: " + bucket);
        }
    }

    /** The file of a key; refuses keys a file system cannot hold or that would leave the root. */
    private Path fileFor(ObjectKey key) throws StoreException {
        Path bucketDir = bucketDir(key.bucket());
        String k = key.key();
        if (k.startsWith("/") || k.endsWith("/") || k.contains("//") || k.contains("\\")) {
            throw unstorable(key, "it has an empty path segment or a backslash");
        }
        for (String segment : k.split("/")) {
            if (segment.equals(".") || segment.equals("..") || segment.equals(TMP_DIR) || segment.equals(UPLOADS_DIR) || segment.equals(META_DIR)) {
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

    private static StoreException unstorable(ObjectKey key, String why) {
        return new StoreException(StoreException.Kind.FATAL, 400, "key cannot be stored in a file system store because " + why + ": " + key, null);
    }

    private ObjectNotFoundException notFound(ObjectKey key) {
        if (!Files.isDirectory(root.resolve(key.bucket()))) {
            return new ObjectNotFoundException("no such bucket: " + key.bucket());
        }
        return ObjectNotFoundException.of(key);
    }

    private Path uploadDir(MultipartUpload upload) throws IOException {
        String id = upload.uploadId();
        if (id.contains("/") || id.contains("..") || id.startsWith(".")) {
            throw new StoreException(StoreException.Kind.NOT_FOUND, 404, "no such upload: " + id, null);
        }
        Path dir = uploads.resolve(id);
        Path keyFile = dir.resolve("key");
        if (!Files.isRegularFile(keyFile)) {
            throw new StoreException(StoreException.Kind.NOT_FOUND, 404, "no such upload: " + id + " for " + upload.key(), null);
        }
        String expected = upload.key().bucket() + "\n" + upload.key().key();
        if (!Files.readString(keyFile).equals(expected)) {
            throw new StoreException(StoreException.Kind.NOT_FOUND, 404, "upload " + id + " is not for " + upload.key(), null);
        }
        return dir;
    }

    /** A body written to a temporary file, fsync'd, with the MD5 of its bytes in hex. */
    private record Written(Path file, String md5) {
    }

    private Written writeTemp(PutBody body) throws IOException {
        Path temp = tmp.resolve(UUID.randomUUID() + ".part");
        try {
            java.security.MessageDigest md5 = Etags.md5();
            try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                long written = 0;
                // The channel's stream is not closed here: closing it would close the channel before fsync.
                OutputStream out = Channels.newOutputStream(channel);
                try (InputStream in = body.open()) {
                    byte[] buf = new byte[1 << 16];
                    for (int n; (n = in.read(buf)) > 0; ) {
                        md5.update(buf, 0, n);
                        out.write(buf, 0, n);
                        written += n;
                    }
                }
                if (written != body.length()) {
                    throw new StoreException(StoreException.Kind.FATAL, 400,
                            "body yielded " + written + " bytes but declared " + body.length(), null);
                }
                channel.force(true);
            }
            return new Written(temp, Etags.ofDigest(md5.digest()));
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(temp);
            throw e;
        }
    }

    /** Moves an fsync'd temporary file to the key, its sidecar (ETag, attributes) first. */
    private ObjectMeta moveIntoPlace(ObjectKey key, Path temp, Path file, String etag, ObjectAttributes attributes) throws IOException {
        try {
            requireBucket(key.bucket());
            try {
                Files.createDirectories(file.getParent());
            } catch (FileAlreadyExistsException e) {
                throw unstorable(key, "a parent folder of it is already an object");
            }
            if (Files.isDirectory(file)) {
                throw unstorable(key, "other keys already use it as a folder");
            }
            sidecars.write(key, Sidecars.identity(Files.readAttributes(temp, BasicFileAttributes.class)), etag, attributes);
            try {
                Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            return meta(key, Files.readAttributes(file, BasicFileAttributes.class));
        } finally {
            Files.deleteIfExists(temp);
        }
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

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
