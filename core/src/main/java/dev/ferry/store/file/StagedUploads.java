package dev.ferry.store.file;

import dev.ferry.store.Checksum;
import dev.ferry.store.CompletedPart;
import dev.ferry.store.Etags;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.Parts;
import dev.ferry.store.PendingUploads.Upload;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * The folder store's multipart uploads, staged under {@code ROOT/.ferry-uploads/<id>/}: the upload's key and
 * attributes, and each part as {@code <n>-<md5>}, so a part is found by the ETag a client names for it, never
 * another upload of the same number; every part but the last must be at least 5 MiB ({@code EntityTooSmall}).
 * Completing assembles the parts into a temporary file, fsync'd, that the store moves into place at the key
 * ({@link Destination#place}), with the ETag S3 gives (the MD5 of the parts' MD5s, then {@code -N}) and, when the
 * upload declared one, the checksum S3 gives. A completed upload leaves a marker, so a repeated Complete answers
 * the same ETag while the object is still the one it made.
 *
 * <p>Thread-safe: every operation is a file-system operation, atomic where it matters.
 */
final class StagedUploads {
    private static final String COMPLETED = "completed";
    private static final String ATTRIBUTES = "attributes";

    /** What uploads need of the store their objects go to. */
    interface Destination {
        /** Refuses now, with the error a write would get, a key the store could not take. */
        void checkWritable(ObjectKey key) throws IOException;

        /** Moves {@code assembled}, an fsync'd temporary file, into place at {@code key}. */
        ObjectMeta place(ObjectKey key, Path assembled, String etag, ObjectAttributes attributes) throws IOException;

        ObjectMeta head(ObjectKey key) throws IOException;
    }

    private final Path uploads;
    private final TempFiles temps;
    private final Destination destination;

    StagedUploads(Path uploads, TempFiles temps, Destination destination) {
        this.uploads = uploads;
        this.temps = temps;
        this.destination = destination;
    }

    /** Starts an upload of {@code key}: its key and bucket are checked now, not at completion. */
    MultipartUpload start(ObjectKey key, ObjectAttributes attributes) throws IOException {
        destination.checkWritable(key); // the key and the bucket now, not at completion
        String id = UUID.randomUUID().toString();
        Path dir = Files.createDirectories(uploads.resolve(id));
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
            attributes.writeTo(out);
        }
        temps.writeWhole(dir.resolve(ATTRIBUTES), bytes.toByteArray());
        temps.writeWhole(dir.resolve("key"), (key.bucket() + "\n" + key.key()).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return new MultipartUpload(key, id);
    }

    CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        Path dir = uploadDir(upload);
        if (partNumber < 1 || partNumber > CompletedPart.MAX_PARTS) {
            throw new StoreException(StoreException.Kind.FATAL, 400,
                    "part number must be 1 to " + CompletedPart.MAX_PARTS + ": " + partNumber, null);
        }
        TempFiles.Written temp = temps.write(body);
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

    /** The sizes of the named parts of an upload in progress, in order (checked as {@link #complete} does). */
    List<Long> partSizes(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
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

    /** Assembles the named parts into the upload's object; a Complete repeated answers the same while the object is the one it made. */
    ObjectMeta complete(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
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
        Path temp = temps.newFile();
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
        ObjectMeta meta = destination.place(upload.key(), temp, etag, attributes);
        // the upload is kept as a marker (its parts go), so that a retried Complete gets the same answer
        temps.writeWhole(completed, etag.getBytes(java.nio.charset.StandardCharsets.UTF_8));
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
            ObjectMeta now = destination.head(upload.key());
            if (now.etag().equals(etag)) {
                return now;
            }
        } catch (ObjectNotFoundException e) {
            // deleted since: the upload's object is gone
        }
        throw new StoreException(StoreException.Kind.NOT_FOUND, 404, "NoSuchUpload", "no such upload: " + upload.uploadId()
                + " was completed and its object " + upload.key() + " has been replaced or deleted since", null);
    }

    /** The uploads of {@code bucket} under {@code prefix} not completed or aborted, by key then start. */
    List<Upload> list(String bucket, String prefix) throws IOException {
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

    /** Aborts the uploads started before {@code cutoff}; returns how many. */
    int expire(Instant cutoff) throws IOException {
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

    void abort(MultipartUpload upload) throws IOException {
        deleteRecursively(uploadDir(upload));
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
