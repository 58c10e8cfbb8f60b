package dev.ferry.writeback;

import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectKey;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One acknowledged write as its journal record holds it: the key, the size and CRC32C of its local copy, when
 * it was written, the ETag the client was answered (which the upload must reproduce: one PUT for a PUT, the
 * client's part sizes for a multipart upload, null for a PUT answered whole) and the attributes the object keeps.
 * A {@code delete} record is a DELETE of a key whose writes were still pending: it has no data, and its
 * "upload" deletes the key in the store after them.
 *
 * {@code after}, when not null, is a prefix of the key's bucket: the write is uploaded only once every write under
 * that prefix acknowledged before it is in the store (a checkpoint's metadata after its files).
 *
 * <p>Version 1 records (ferry before ETags were content MD5s) have no ETag, part sizes or attributes; they
 * are read as a single PUT of no attributes. Version 2 records are never deletes; version 4 ones carry {@code after}.
 */
record WriteRecord(long sequence, ObjectKey key, long size, int crc, Instant written, String etag, List<Long> partSizes,
        ObjectAttributes attributes, boolean delete, String after) {
    private static final int MAGIC_V1 = 0x46525757; // "FRWW"
    private static final int MAGIC_V2 = 0x46525732; // "FRW2"
    private static final int MAGIC_V3 = 0x46525733; // "FRW3": v2 and the delete flag
    private static final int MAGIC_V4 = 0x46525734; // "FRW4": v3 and the prefix it waits for

    WriteRecord(long sequence, ObjectKey key, long size, int crc, Instant written, String etag, List<Long> partSizes,
            ObjectAttributes attributes) {
        this(sequence, key, size, crc, written, etag, partSizes, attributes, false, null);
    }

    /** A DELETE of {@code key}, ordered after the writes of it acknowledged before. */
    static WriteRecord deletion(long sequence, ObjectKey key, Instant written) {
        return new WriteRecord(sequence, key, 0, 0, written, null, null, ObjectAttributes.NONE, true, null);
    }

    WriteRecord {
        Objects.requireNonNull(key, "key is null");
        Objects.requireNonNull(written, "written is null");
        Objects.requireNonNull(attributes, "attributes is null");
        partSizes = partSizes == null ? null : List.copyOf(partSizes);
        if (partSizes != null && partSizes.stream().mapToLong(Long::longValue).sum() != size) {
            throw new IllegalArgumentException("part sizes of " + key + " add up to " + partSizes.stream().mapToLong(Long::longValue).sum()
                    + ", not its size " + size);
        }
    }

    byte[] encode() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(after != null ? MAGIC_V4 : delete ? MAGIC_V3 : MAGIC_V2); // a plain write stays readable by a ferry that knows only v2
            out.writeLong(sequence);
            out.writeUTF(key.bucket());
            out.writeUTF(key.key());
            out.writeLong(size);
            out.writeInt(crc);
            out.writeLong(written.toEpochMilli());
            out.writeUTF(etag == null ? "" : etag);
            out.writeInt(partSizes == null ? -1 : partSizes.size());
            if (partSizes != null) {
                for (long p : partSizes) {
                    out.writeLong(p);
                }
            }
            attributes.writeTo(out);
            if (delete || after != null) {
                out.writeBoolean(delete);
            }
            if (after != null) {
                out.writeUTF(after);
            }
        }
        return bytes.toByteArray();
    }

    static WriteRecord decode(InputStream stream) throws IOException {
        DataInputStream in = new DataInputStream(stream);
        int magic = in.readInt();
        if (magic != MAGIC_V1 && magic != MAGIC_V2 && magic != MAGIC_V3 && magic != MAGIC_V4) {
            throw new IOException("not a write-back record");
        }
        long sequence = in.readLong();
        ObjectKey key = ObjectKey.of(in.readUTF(), in.readUTF());
        long size = in.readLong();
        int crc = in.readInt();
        Instant written = Instant.ofEpochMilli(in.readLong());
        if (magic == MAGIC_V1) {
            return new WriteRecord(sequence, key, size, crc, written, null, null, ObjectAttributes.NONE);
        }
        String etag = in.readUTF();
        int parts = in.readInt();
        List<Long> sizes = null;
        if (parts >= 0) {
            if (parts > dev.ferry.store.CompletedPart.MAX_PARTS) {
                throw new IOException("not a part count: " + parts);
            }
            sizes = new ArrayList<>(parts);
            for (int i = 0; i < parts; i++) {
                sizes.add(in.readLong());
            }
        }
        ObjectAttributes attributes = ObjectAttributes.readFrom(in);
        boolean delete = (magic == MAGIC_V3 || magic == MAGIC_V4) && in.readBoolean();
        String after = magic == MAGIC_V4 ? in.readUTF() : null;
        return new WriteRecord(sequence, key, size, crc, written, etag.isEmpty() ? null : etag, sizes, attributes, delete, after);
    }
}
