package dev.ferry.store.file;

import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectKey;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.UUID;

/**
 * What the folder store keeps beside an object's file: its ETag (the content MD5, as S3 computes it) and its
 * attributes, in a small file under {@code ROOT/.ferry-meta/<bucket>/<2 hex>/<sha256 of the key>} (flat, so
 * keys that are folders of other keys never collide with it).
 *
 * <p>A sidecar names the identity of the file it describes (inode, modification time, size). It is written
 * (temporary name, fsync, rename) before the object's file is moved into place, and believed only while the
 * file at the key still has that identity: a file replaced by another program, or a crash between the two
 * renames, leaves an object whose ETag is derived from its file's identity and which has no attributes;
 * never an ETag or attributes of other bytes. Thread-safe.
 */
final class Sidecars {
    private static final int MAGIC = 0x46524d44; // "FRMD"

    /** What a sidecar says about the file of identity {@code identity}. */
    record Entry(String identity, String etag, ObjectAttributes attributes) {
    }

    private final Path dir;
    private final Path tmp;

    Sidecars(Path dir, Path tmp) throws IOException {
        this.dir = Files.createDirectories(dir);
        this.tmp = tmp;
    }

    /** The identity a sidecar names: changes whenever the file is replaced or rewritten. */
    static String identity(BasicFileAttributes attrs) {
        return attrs.fileKey() + "/" + attrs.lastModifiedTime().toInstant() + "/" + attrs.size();
    }

    private Path pathOf(ObjectKey key) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(key.key().getBytes(StandardCharsets.UTF_8));
            String hex = HexFormat.of().formatHex(h);
            return dir.resolve(key.bucket()).resolve(hex.substring(0, 2)).resolve(hex);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }

    /** The sidecar's entry when it describes a file of this identity, else null. */
    Entry read(ObjectKey key, BasicFileAttributes attrs) throws IOException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(pathOf(key));
        } catch (NoSuchFileException e) {
            return null;
        }
        try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes))) {
            if (in.readInt() != MAGIC) {
                return null;
            }
            Entry e = new Entry(in.readUTF(), in.readUTF(), ObjectAttributes.readFrom(in));
            return e.identity().equals(identity(attrs)) ? e : null;
        } catch (IOException | IllegalArgumentException damaged) {
            return null; // a damaged sidecar describes nothing: the object falls back to its identity ETag
        }
    }

    /** Writes the sidecar of {@code key} for the file of identity {@code identity} (temporary name, fsync, rename). */
    void write(ObjectKey key, String identity, String etag, ObjectAttributes attributes) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeUTF(identity);
            out.writeUTF(etag);
            attributes.writeTo(out);
        }
        Path target = pathOf(key);
        Files.createDirectories(target.getParent());
        Path temp = tmp.resolve(UUID.randomUUID() + ".meta");
        try {
            try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer b = ByteBuffer.wrap(bytes.toByteArray());
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    void delete(ObjectKey key) throws IOException {
        Files.deleteIfExists(pathOf(key));
    }
}
