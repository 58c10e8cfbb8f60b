package dev.ferry.cache;

import dev.ferry.store.ObjectKey;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * The on-disk form of one cached block: a header naming the block (bucket, key, ETag, index), the object's
 * size, the data length and the data's CRC32C, protected by its own CRC32C; then the data. The header makes
 * every block file self-describing, so the index can be rebuilt from the files alone after a crash.
 *
 * <pre>
 * magic "FRYB" (4) | version (1) | header length (4) | bucket, key, etag (modified UTF-8) | index (8)
 * | object size (8) | block size (4) | data length (4) | data CRC32C (4) | header CRC32C (4) | data
 * </pre>
 *
 * Files are written under a temporary name, fsync'd and renamed into place, so a file under its final name is
 * always complete. Stateless; all methods are thread-safe.
 */
final class BlockFile {
    static final int MAGIC = 0x46525942; // "FRYB"
    static final byte VERSION = 1;
    private static final int MAX_HEADER = 16 * 1024;

    private BlockFile() {
    }

    /** A block file's header, as read back. */
    record Header(BlockId id, long objectSize, int blockSize, int dataLength, int dataCrc, int headerLength) {
    }

    /** A block file that cannot be trusted: torn, foreign, or failing a check. */
    static final class CorruptBlockException extends IOException {
        private static final long serialVersionUID = 1L;

        CorruptBlockException(String message) {
            super(message);
        }
    }

    /** The file name of a block: a digest of its identity, two levels of folders to keep folders small. */
    static Path pathFor(Path blocksDir, BlockId id) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(id.key().bucket().getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(id.key().key().getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(id.etag().getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            sha.update(Long.toString(id.index()).getBytes(StandardCharsets.UTF_8));
            String hex = HexFormat.of().formatHex(sha.digest(), 0, 16);
            return blocksDir.resolve(hex.substring(0, 2)).resolve(hex.substring(2, 4)).resolve(hex + ".blk");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    static int crc(byte[] data, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(data, offset, length);
        return (int) crc.getValue();
    }

    static byte[] encodeHeader(BlockId id, long objectSize, int blockSize, int dataLength, int dataCrc) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(MAGIC);
        out.writeByte(VERSION);
        out.writeInt(0); // header length, filled in below
        out.writeUTF(id.key().bucket());
        out.writeUTF(id.key().key());
        out.writeUTF(id.etag());
        out.writeLong(id.index());
        out.writeLong(objectSize);
        out.writeInt(blockSize);
        out.writeInt(dataLength);
        out.writeInt(dataCrc);
        out.flush();
        byte[] header = new byte[bytes.size() + 4];
        System.arraycopy(bytes.toByteArray(), 0, header, 0, bytes.size());
        ByteBuffer.wrap(header).putInt(5, header.length);
        ByteBuffer.wrap(header).putInt(header.length - 4, crc(header, 0, header.length - 4));
        return header;
    }

    /** Writes a block: temporary file in {@code tmpDir}, fsync, atomic rename to {@code target}. */
    static void write(Path target, Path tmpDir, byte[] header, byte[] data, int offset, int length) throws IOException {
        Path temp = tmpDir.resolve(UUID.randomUUID() + ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer[] buffers = {ByteBuffer.wrap(header), ByteBuffer.wrap(data, offset, length)};
                long total = header.length + (long) length;
                for (long written = 0; written < total; ) {
                    written += ch.write(buffers);
                }
                ch.force(true);
            }
            Files.createDirectories(target.getParent());
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /** Reads and checks a header; the file's length must match it. Does not read the data. */
    static Header readHeader(FileChannel ch, Path path) throws IOException {
        long size = ch.size();
        ByteBuffer buf = ByteBuffer.allocate((int) Math.min(size, MAX_HEADER));
        while (buf.hasRemaining() && ch.read(buf, buf.position()) > 0) {
            // keep reading
        }
        byte[] bytes = buf.array();
        int n = buf.position();
        if (n < 13 || ByteBuffer.wrap(bytes).getInt(0) != MAGIC) {
            throw new CorruptBlockException(path + ": not a ferry block file");
        }
        if (bytes[4] != VERSION) {
            throw new CorruptBlockException(path + ": block format version " + bytes[4] + ", expected " + VERSION);
        }
        int headerLength = ByteBuffer.wrap(bytes).getInt(5);
        if (headerLength < 13 || headerLength > n) {
            throw new CorruptBlockException(path + ": torn or damaged header");
        }
        int stored = ByteBuffer.wrap(bytes).getInt(headerLength - 4);
        if (stored != crc(bytes, 0, headerLength - 4)) {
            throw new CorruptBlockException(path + ": header checksum mismatch");
        }
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, 9, headerLength - 13));
        String bucket = in.readUTF();
        String key = in.readUTF();
        String etag = in.readUTF();
        long index = in.readLong();
        long objectSize = in.readLong();
        int blockSize = in.readInt();
        int dataLength = in.readInt();
        int dataCrc = in.readInt();
        BlockId id;
        try {
            id = new BlockId(ObjectKey.of(bucket, key), etag, index);
        } catch (IllegalArgumentException e) {
            throw new CorruptBlockException(path + ": bad identity in header: " + e.getMessage());
        }
        if (size != headerLength + (long) dataLength) {
            throw new CorruptBlockException(path + ": " + size + " bytes, header says " + (headerLength + (long) dataLength));
        }
        return new Header(id, objectSize, blockSize, dataLength, dataCrc, headerLength);
    }

    /** Reads the whole data of a block and checks its CRC32C. */
    static byte[] readVerified(FileChannel ch, Header h, Path path) throws IOException {
        byte[] data = new byte[h.dataLength()];
        ByteBuffer buf = ByteBuffer.wrap(data);
        long position = h.headerLength();
        while (buf.hasRemaining()) {
            int n = ch.read(buf, position + buf.position());
            if (n < 0) {
                throw new CorruptBlockException(path + ": ends early");
            }
        }
        if (crc(data, 0, data.length) != h.dataCrc()) {
            throw new CorruptBlockException(path + ": data checksum mismatch");
        }
        return data;
    }
}
