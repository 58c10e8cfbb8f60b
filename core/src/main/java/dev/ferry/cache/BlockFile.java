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
 * Files are written under a temporary name and renamed into place, so a file under its final name was complete
 * when it was renamed. Blocks of the read cache are renamed without an fsync (see {@link BlockCache}'s note on
 * durability): after a kill the page cache still holds them whole, and after a power loss the header (length,
 * CRC32C) and the check of every recovered block on its first read reject what the disk lost. Stateless; all
 * methods are thread-safe ({@link Pending} is one writer's).
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

    /**
     * A block being written as its bytes arrive: data at its place after a header of known length, then the
     * header (which carries the CRC32C of all the data) at the start, then the rename into place. Not
     * thread-safe: one writer.
     */
    static final class Pending {
        private final Path temp;
        private final FileChannel channel;
        private final int headerLength;

        private Pending(Path temp, FileChannel channel, int headerLength) {
            this.temp = temp;
            this.channel = channel;
            this.headerLength = headerLength;
        }

        /** A new temporary file in {@code tmpDir} for a block whose header will be {@code headerLength} bytes. */
        static Pending create(Path tmpDir, int headerLength) throws IOException {
            Path temp = tmpDir.resolve(UUID.randomUUID() + ".tmp");
            return new Pending(temp, FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), headerLength);
        }

        /** The temporary file (readers of a block being filled open it for reading). */
        Path path() {
            return temp;
        }

        /** Where the data starts in the file. */
        int headerLength() {
            return headerLength;
        }

        /** Writes {@code length} bytes of data at {@code dataOffset} in the block. */
        void write(byte[] data, int offset, int length, long dataOffset) throws IOException {
            ByteBuffer buf = ByteBuffer.wrap(data, offset, length);
            while (buf.hasRemaining()) {
                channel.write(buf, headerLength + dataOffset + (buf.position() - offset));
            }
        }

        /**
         * Writes the header, then renames the file to {@code target}; with {@code durable}, fsyncs it first
         * (a block that cannot be fetched again). The header must be {@code headerLength} bytes long.
         */
        void commit(byte[] header, Path target, boolean durable) throws IOException {
            if (header.length != headerLength) {
                throw new IllegalArgumentException("header is " + header.length + " bytes, expected " + headerLength);
            }
            try {
                write0(header);
                if (durable) {
                    channel.force(true);
                }
                channel.close();
                Files.createDirectories(target.getParent());
                try {
                    Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                discard();
            }
        }

        private void write0(byte[] header) throws IOException {
            ByteBuffer buf = ByteBuffer.wrap(header);
            while (buf.hasRemaining()) {
                channel.write(buf, buf.position());
            }
        }

        /** Closes and deletes the temporary file (nothing after a commit). */
        void discard() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // deleting it next
            }
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // a leftover in tmp/ is deleted on the next open
            }
        }
    }

    /** Fsyncs a block file already in place (what {@code close} does before it writes the index snapshot). */
    static void sync(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.force(true);
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

    /** Reads the data of a block in pieces of {@code chunk} bytes and checks its CRC32C, keeping none of it. */
    static void checkData(FileChannel ch, Header h, Path path, int chunk) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(Math.min(chunk, Math.max(1, h.dataLength())));
        CRC32C crc = new CRC32C();
        long position = h.headerLength();
        long end = position + h.dataLength();
        while (position < end) {
            buf.clear().limit((int) Math.min(buf.capacity(), end - position));
            int n = ch.read(buf, position);
            if (n < 0) {
                throw new CorruptBlockException(path + ": ends early");
            }
            crc.update(buf.array(), 0, buf.position());
            position += n;
        }
        if ((int) crc.getValue() != h.dataCrc()) {
            throw new CorruptBlockException(path + ": data checksum mismatch");
        }
    }
}
