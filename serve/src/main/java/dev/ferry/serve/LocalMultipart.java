package dev.ferry.serve;

import dev.ferry.store.CompletedPart;
import dev.ferry.store.FileObjectStore;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;

/**
 * Multipart uploads under write-back, staged in a {@link FileObjectStore} on local disk: its multipart
 * upload already fsyncs each part before acknowledging it, checks the parts' ETags and assembles them with
 * an fsync and an atomic rename. Completing an upload assembles the object there and hands the file to
 * write-back like a PUT; an upload never completed is never an object, as in S3, and its parts survive a
 * restart, so a client may complete it after the daemon comes back.
 *
 * <p>Each upload stages its object under its own name, {@code <uuid>-<sha256 of bucket/key>}, so uploads
 * of one key do not collide and an upload id used with another key is refused (no such upload). The
 * daemon's upload id is {@code ferry-wb-<uuid>.<the staging store's upload id>}. Thread-safe.
 */
final class LocalMultipart {
    static final String PREFIX = "ferry-wb-";
    private static final String STAGING = "staging";

    private final Path dir;
    private final FileObjectStore staging;

    LocalMultipart(Path dir) throws IOException {
        this.dir = dir;
        this.staging = new FileObjectStore(dir);
        this.staging.createBucket(STAGING);
    }

    static boolean owns(String uploadId) {
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

    /** The staging store's upload behind one of ours. */
    private static MultipartUpload stagedUpload(MultipartUpload upload) throws StoreException {
        String id = upload.uploadId().substring(PREFIX.length());
        int dot = id.indexOf('.');
        if (dot <= 0 || dot == id.length() - 1) {
            throw new StoreException(StoreException.Kind.NOT_FOUND, 404, "no such upload: " + upload.uploadId(), null);
        }
        return new MultipartUpload(staged(id.substring(0, dot), upload.key()), id.substring(dot + 1));
    }

    MultipartUpload start(ObjectKey key) throws IOException {
        String uuid = UUID.randomUUID().toString();
        MultipartUpload u = staging.startMultipart(staged(uuid, key));
        return new MultipartUpload(key, PREFIX + uuid + "." + u.uploadId());
    }

    CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        return staging.uploadPart(stagedUpload(upload), partNumber, body);
    }

    /**
     * Assembles the named parts, in order, into one local file: the caller writes it back, then
     * {@link #discard}s it. A Complete retried after the write-back failed finds the object already
     * assembled (its parts are gone by then) and gets it again.
     */
    Path assemble(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        MultipartUpload staged = stagedUpload(upload);
        Path file = dir.resolve(staged.key().bucket()).resolve(staged.key().key()); // the folder store's layout: bucket/key
        try {
            staging.completeMultipart(staged, parts);
        } catch (StoreException e) {
            if (e.kind() != StoreException.Kind.NOT_FOUND || !java.nio.file.Files.isRegularFile(file)) {
                throw e;
            }
        }
        return file;
    }

    /** Removes a completed upload's assembled object (once written back). */
    void discard(MultipartUpload upload) throws IOException {
        staging.delete(stagedUpload(upload).key());
    }

    /** Abandons an upload and its parts. */
    void abort(MultipartUpload upload) throws IOException {
        staging.abortMultipart(stagedUpload(upload));
    }
}
