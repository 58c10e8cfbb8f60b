package dev.ferry.serve;

import dev.ferry.store.CompletedPart;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Multipart uploads under write-back: parts are kept on local disk (each fsync'd before it is acknowledged,
 * as S3 acknowledges a part once it is durable there), and completing the upload assembles them into one
 * local file that goes to write-back like a PUT: acknowledged once fsync'd and journaled, uploaded in the
 * background. An upload that is never completed is never an object, as in S3; its parts survive a restart,
 * so a client may complete it after the daemon comes back. Upload ids are {@code ferry-wb-<uuid>}.
 * Thread-safe: uploads are independent folders; one upload's parts may arrive concurrently.
 */
final class LocalMultipart {
    static final String PREFIX = "ferry-wb-";
    private final Path dir;

    LocalMultipart(Path dir) throws IOException {
        this.dir = Files.createDirectories(dir);
    }

    static boolean owns(String uploadId) {
        return uploadId.startsWith(PREFIX);
    }

    MultipartUpload start(ObjectKey key) throws IOException {
        String id = PREFIX + UUID.randomUUID();
        Path upload = Files.createDirectories(dir.resolve(id));
        Path keyFile = upload.resolve("key");
        Files.writeString(keyFile, key.bucket() + "\n" + key.key(), StandardCharsets.UTF_8);
        try (FileChannel ch = FileChannel.open(keyFile, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        return new MultipartUpload(key, id);
    }

    private Path uploadDir(MultipartUpload upload) throws IOException {
        String id = upload.uploadId();
        if (!owns(id) || id.contains("/") || id.contains("..")) {
            throw new StoreException(StoreException.Kind.NOT_FOUND, 404, "no such upload: " + id, null);
        }
        Path d = dir.resolve(id);
        try {
            String key = Files.readString(d.resolve("key"), StandardCharsets.UTF_8);
            if (!key.equals(upload.key().bucket() + "\n" + upload.key().key())) {
                throw new StoreException(StoreException.Kind.NOT_FOUND, 404, "upload " + id + " is not for " + upload.key(), null);
            }
        } catch (NoSuchFileException e) {
            throw new StoreException(StoreException.Kind.NOT_FOUND, 404, "no such upload: " + id, null);
        }
        return d;
    }

    /** Keeps a part: written to a temporary name, fsync'd, renamed; its ETag is the MD5 of its bytes, as S3's. */
    CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        Path d = uploadDir(upload);
        Path temp = d.resolve(partNumber + "." + UUID.randomUUID() + ".tmp");
        MessageDigest md5;
        try {
            md5 = MessageDigest.getInstance("MD5");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (InputStream in = body.open(); FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md5.update(buf, 0, n);
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(buf, 0, n);
                while (b.hasRemaining()) {
                    out.write(b);
                }
            }
            out.force(true);
        } catch (IOException e) {
            Files.deleteIfExists(temp);
            throw e;
        }
        String etag = HexFormat.of().formatHex(md5.digest());
        Files.move(temp, d.resolve(partNumber + "-" + etag), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (Stream<Path> old = Files.list(d)) { // a part uploaded again replaces the earlier one
            for (Path p : old.toList()) {
                String name = p.getFileName().toString();
                if (name.startsWith(partNumber + "-") && !name.equals(partNumber + "-" + etag)) {
                    Files.deleteIfExists(p);
                }
            }
        }
        return new CompletedPart(partNumber, etag);
    }

    /** Assembles the named parts, in order, into one local file (the caller writes it back and then discards it). */
    Path assemble(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        Path d = uploadDir(upload);
        Path whole = d.resolve("assembled." + UUID.randomUUID());
        try (FileChannel out = FileChannel.open(whole, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (CompletedPart p : parts) {
                Path part = d.resolve(p.partNumber() + "-" + ObjectMeta.stripQuotes(p.etag()));
                if (!Files.exists(part)) {
                    throw new StoreException(StoreException.Kind.FATAL, 400, "part " + p.partNumber() + " of " + upload.key()
                            + " with ETag " + p.etag() + " was never uploaded", null);
                }
                try (FileChannel in = FileChannel.open(part, StandardOpenOption.READ)) {
                    long size = in.size();
                    for (long at = 0; at < size; ) {
                        at += in.transferTo(at, size - at, out);
                    }
                }
            }
        } catch (IOException e) {
            Files.deleteIfExists(whole);
            throw e;
        }
        return whole;
    }

    /** Removes an upload and its parts (after it was completed and written back, or aborted). */
    void remove(MultipartUpload upload) throws IOException {
        Path d = uploadDir(upload);
        try (Stream<Path> files = Files.list(d)) {
            for (Path p : files.toList()) {
                Files.deleteIfExists(p);
            }
        }
        Files.deleteIfExists(d);
    }
}
