package dev.ferry.serve.node;

import dev.ferry.store.CompletedPart;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PendingUploads;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Multipart uploads under write-back, staged in a {@link FileObjectStore} on local disk: its multipart
 * upload already fsyncs each part before acknowledging it, finds parts by the ETags named, checks their
 * sizes and assembles them with an fsync and an atomic rename. Completing an upload assembles the object
 * there and hands the file to write-back with its part sizes and ETag ({@code md5-of-md5s-N}), so it is
 * uploaded in the same parts and the store reports the same ETag; an upload never completed is never an
 * object, as in S3, and its parts survive a restart, so a client may complete it after the daemon comes back.
 *
 * <p>Each upload stages its object under its own name, {@code <uuid>-<sha256 of bucket/key>}, so uploads
 * of one key do not collide and an upload id used with another key is refused (no such upload). The
 * daemon's upload id is {@code ferry-wb-<uuid>.<the staging store's upload id>}. An index file per upload
 * ({@code index/<uuid>}: bucket, key) lets them be listed and expired; a completed upload leaves
 * {@code completed/<uuid>} (bucket, key, ETag) so a retried Complete gets the same answer until it expires;
 * {@code sizes/<uuid>} keeps the part sizes of an upload being completed, for a Complete retried after its
 * parts were assembled.
 * Thread-safe.
 */
public final class LocalMultipart {
    static final String PREFIX = "ferry-wb-";
    private static final String STAGING = "staging";

    /** An upload assembled into one local file, ready to be written back. */
    public record Assembled(PutBody body, List<Long> partSizes, String etag) {
    }

    private final Path dir;
    private final Path index;
    private final Path completed;
    private final Path sizes;
    private final FileObjectStore staging;

    LocalMultipart(Path dir) throws IOException {
        this.dir = dir;
        this.staging = new FileObjectStore(dir);
        this.staging.createBucket(STAGING);
        this.index = Files.createDirectories(dir.resolve("index"));
        this.completed = Files.createDirectories(dir.resolve("completed"));
        this.sizes = Files.createDirectories(dir.resolve("sizes"));
    }

    public static boolean owns(String uploadId) {
        return uploadId.startsWith(PREFIX);
    }

    private static ObjectKey staged(String uuid, ObjectKey key) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest((key.bucket() + "/" + key.key()).getBytes(StandardCharsets.UTF_8));
            return ObjectKey.of(STAGING, uuid + "-" + HexFormat.of().formatHex(h));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }

    private static String uuidOf(MultipartUpload upload) throws StoreException {
        String id = upload.uploadId().substring(PREFIX.length());
        int dot = id.indexOf('.');
        if (dot <= 0 || dot == id.length() - 1) {
            throw noSuchUpload(upload);
        }
        return id.substring(0, dot);
    }

    private static StoreException noSuchUpload(MultipartUpload upload) {
        return new StoreException(StoreException.Kind.NOT_FOUND, 404, "NoSuchUpload", "no such upload: " + upload.uploadId(), null);
    }

    /** The staging store's upload behind one of ours. */
    private static MultipartUpload stagedUpload(MultipartUpload upload) throws StoreException {
        String uuid = uuidOf(upload);
        return new MultipartUpload(staged(uuid, upload.key()), upload.uploadId().substring(PREFIX.length() + uuid.length() + 1));
    }

    public MultipartUpload start(ObjectKey key, ObjectAttributes attributes) throws IOException {
        String uuid = UUID.randomUUID().toString();
        MultipartUpload u = staging.startMultipart(staged(uuid, key), attributes);
        MultipartUpload ours = new MultipartUpload(key, PREFIX + uuid + "." + u.uploadId());
        writeSmall(index.resolve(uuid), key.bucket() + "\n" + key.key() + "\n" + ours.uploadId());
        return ours;
    }

    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        return staging.uploadPart(stagedUpload(upload), partNumber, body);
    }

    /** The ETag a completed upload was answered, when {@code upload} was completed (and not yet expired); else null. */
    public String completedEtag(MultipartUpload upload) throws IOException {
        try {
            String[] lines = Files.readString(completed.resolve(uuidOf(upload))).split("\n", 4);
            return lines.length == 4 && lines[0].equals(upload.key().bucket()) && lines[1].equals(upload.key().key())
                    && lines[2].equals(upload.uploadId()) ? lines[3] : null;
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * Assembles the named parts, in order, into one local file: the caller writes it back, then
     * {@link #finish}es the upload. A Complete retried after the write-back failed finds the object already
     * assembled and gets it again.
     */
    public Assembled assemble(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        MultipartUpload staged = stagedUpload(upload);
        Path file = dir.resolve(staged.key().bucket()).resolve(staged.key().key()); // the folder store's layout: bucket/key
        Path sizesFile = sizes.resolve(uuidOf(upload));
        List<Long> partSizes;
        ObjectMeta meta;
        if (Files.isRegularFile(sizesFile)) { // assembled by an earlier Complete whose write-back failed: its parts are gone
            partSizes = Files.readAllLines(sizesFile).stream().map(Long::parseLong).toList();
            meta = staging.completeMultipart(staged, parts);
        } else {
            partSizes = staging.partSizes(staged, parts);
            meta = staging.completeMultipart(staged, parts); // checks the parts, deletes them
            writeSmall(sizesFile, String.join("\n", partSizes.stream().map(String::valueOf).toList()));
        }
        return new Assembled(PutBody.ofFile(file).withAttributes(meta.attributes()), partSizes, meta.etag());
    }

    /** Records a completed upload (written back as {@code etag}) and removes its assembled object. */
    public void finish(MultipartUpload upload, String etag) throws IOException {
        String uuid = uuidOf(upload);
        writeSmall(completed.resolve(uuid), upload.key().bucket() + "\n" + upload.key().key() + "\n" + upload.uploadId() + "\n" + etag);
        Files.deleteIfExists(index.resolve(uuid));
        Files.deleteIfExists(sizes.resolve(uuid));
        staging.delete(stagedUpload(upload).key());
    }

    /** Abandons an upload and its parts. */
    public void abort(MultipartUpload upload) throws IOException {
        staging.abortMultipart(stagedUpload(upload));
        staging.delete(stagedUpload(upload).key()); // assembled by a Complete whose write-back failed
        Files.deleteIfExists(index.resolve(uuidOf(upload)));
        Files.deleteIfExists(sizes.resolve(uuidOf(upload)));
    }

    /** Uploads in progress in {@code bucket} under {@code prefix}, by key then start time. */
    public List<PendingUploads.Upload> list(String bucket, String prefix) throws IOException {
        List<PendingUploads.Upload> out = new ArrayList<>();
        for (Path p : files(index)) {
            try {
                String[] lines = Files.readString(p).split("\n", 3);
                if (lines.length == 3 && lines[0].equals(bucket) && lines[1].startsWith(prefix)) {
                    out.add(new PendingUploads.Upload(ObjectKey.of(lines[0], lines[1]), lines[2], Files.getLastModifiedTime(p).toInstant()));
                }
            } catch (NoSuchFileException e) {
                // completed or aborted meanwhile
            }
        }
        out.sort(Comparator.comparing((PendingUploads.Upload u) -> u.key().key()).thenComparing(PendingUploads.Upload::initiated));
        return out;
    }

    /** Aborts uploads started before {@code cutoff}, and forgets completions older than it; returns the uploads aborted. */
    int expire(Instant cutoff) throws IOException {
        int n = 0;
        for (Path p : files(index)) {
            try {
                if (Files.getLastModifiedTime(p).toInstant().isBefore(cutoff)) {
                    String[] lines = Files.readString(p).split("\n", 3);
                    abort(new MultipartUpload(ObjectKey.of(lines[0], lines[1]), lines[2]));
                    n++;
                }
            } catch (NoSuchFileException | StoreException | ArrayIndexOutOfBoundsException e) {
                Files.deleteIfExists(p); // gone meanwhile, or damaged: its parts go with the staging store's expiry below
            }
        }
        for (Path p : files(completed)) {
            if (Files.getLastModifiedTime(p).toInstant().isBefore(cutoff)) {
                Files.deleteIfExists(p);
            }
        }
        staging.expireUploads(cutoff);
        return n;
    }

    private static List<Path> files(Path folder) throws IOException {
        try (Stream<Path> s = Files.list(folder)) {
            return s.filter(p -> !p.getFileName().toString().startsWith(".")).toList();
        }
    }

    private static void writeSmall(Path target, String text) throws IOException {
        Path temp = target.resolveSibling("." + UUID.randomUUID() + ".tmp");
        try {
            Files.writeString(temp, text);
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(temp, java.nio.file.StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temp);
        }
    }
}
