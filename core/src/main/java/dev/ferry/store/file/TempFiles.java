package dev.ferry.store.file;

import dev.ferry.store.Etags;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.UUID;

/**
 * The folder store's temporary files ({@code ROOT/.ferry-tmp}): every write lands here first, is fsync'd, and is
 * only then moved into place atomically, so a reader sees the old file or the new one, never a half-written one.
 * Thread-safe: each write has a name of its own.
 */
final class TempFiles {
    private final Path dir;

    TempFiles(Path dir) {
        this.dir = dir;
    }

    /** A fresh name in the temporary folder, for a file the caller writes and moves into place (or deletes). */
    Path newFile() {
        return dir.resolve(UUID.randomUUID() + ".part");
    }

    /** A body written to a temporary file, fsync'd, with the MD5 of its bytes in hex. */
    record Written(Path file, String md5) {
    }

    /** Writes {@code body} to a new temporary file, fsync'd; fails (leaving nothing) when it yields another length than it declares. */
    Written write(PutBody body) throws IOException {
        Path temp = newFile();
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

    /** Writes a small file whole at {@code target}: temporary name, fsync, rename. */
    void writeWhole(Path target, byte[] bytes) throws IOException {
        Path temp = newFile();
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
}
