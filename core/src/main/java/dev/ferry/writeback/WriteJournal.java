package dev.ferry.writeback;

import dev.ferry.store.Etags;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Write-back's journal on local disk: each acknowledged write is a data file ({@code data/<seq>.obj}) and a record
 * ({@code journal/<seq>.rec}: key, size, CRC32C, ETag, parts, attributes; {@link WriteRecord}), both written to a
 * temporary name ({@code tmp/}), fsync'd and renamed, the record last: a record on disk means the write was
 * acknowledged, and its data is complete. A delete waiting behind pending writes is a record with no data. Before a
 * write's first upload attempt, an empty {@code journal/<seq>.sent} is fsync'd: after a crash it says an attempt may
 * have been in flight. On open, temporaries are deleted; {@link #replay} reads the records back and deletes data
 * that was never acknowledged.
 *
 * <p>Thread-safe: each write has a sequence number of its own, so files of its own.
 */
final class WriteJournal {
    private static final Logger LOG = LoggerFactory.getLogger(WriteJournal.class);

    /**
     * A record read back at open, with the ETag its object will have in the store (null for a delete), and whether an
     * upload of it had been started (an attempt may have been in flight when the process ended).
     */
    record Replayed(WriteRecord record, String etag, boolean sent) {
    }

    /** What {@link #replay} found: the acknowledged writes, and the sequence number the next write takes. */
    record Replay(List<Replayed> writes, long nextSequence) {
    }

    private final Path dir;
    private final Path dataDir;
    private final Path journalDir;
    private final Path tmpDir;
    private final Clock clock;
    private final String id;

    /** The journal in {@code dir} (created if missing), stamping records on {@code clock}; temporaries a crash left are deleted. */
    WriteJournal(Path dir, Clock clock) throws IOException {
        this.dir = dir;
        this.clock = clock;
        this.dataDir = Files.createDirectories(dir.resolve("data"));
        this.journalDir = Files.createDirectories(dir.resolve("journal"));
        this.tmpDir = Files.createDirectories(dir.resolve("tmp"));
        this.id = readOrMakeId(dir.resolve("id"), tmpDir);
        try (Stream<Path> temps = Files.list(tmpDir)) {
            for (Path t : temps.toList()) {
                Files.deleteIfExists(t);
            }
        }
    }

    Path dir() {
        return dir;
    }

    /** A random name given to this journal when its folder was made: another folder (a node's new disk) has another. */
    String id() {
        return id;
    }

    private static String readOrMakeId(Path file, Path tmpDir) throws IOException {
        if (Files.exists(file)) {
            String id = Files.readString(file).trim();
            if (!id.isEmpty()) {
                return id;
            }
        }
        String id = java.util.UUID.randomUUID().toString();
        Path temp = tmpDir.resolve("id");
        writeSynced(temp, id.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return id;
    }

    /** The local copy of write {@code sequence}. */
    Path data(long sequence) {
        return dataDir.resolve(sequence + ".obj");
    }

    private Path record(long sequence) {
        return journalDir.resolve(sequence + ".rec");
    }

    private Path sentMark(long sequence) {
        return journalDir.resolve(sequence + ".sent");
    }

    /**
     * Notes, durably, that an upload of write {@code sequence} is about to start: after a crash its attempts are known
     * to have been possibly in flight. Best effort: a disk that refuses it is logged, and the upload goes on.
     */
    void markSent(long sequence) {
        Path mark = sentMark(sequence);
        try {
            if (!Files.exists(mark)) {
                writeSynced(mark, new byte[0]);
                fsyncDirectory(journalDir);
            }
        } catch (IOException e) {
            LOG.warn("cannot note the upload of write {} in the journal ({}); after a crash it is not known to have been sent", sequence,
                    e.getMessage());
        }
    }

    /**
     * Reads back the journal: every record whose data is complete is a write acknowledged and not yet durable. A record
     * that cannot be read is left in place for inspection; data with no record was never acknowledged and is deleted.
     */
    Replay replay() throws IOException {
        List<Path> records;
        try (Stream<Path> list = Files.list(journalDir)) {
            records = list.filter(p -> p.getFileName().toString().endsWith(".rec")).toList();
        }
        List<Replayed> writes = new ArrayList<>();
        Set<Long> replayed = new HashSet<>();
        long max = 0;
        for (Path r : records) {
            try (InputStream in = Files.newInputStream(r)) {
                WriteRecord record = WriteRecord.decode(in);
                Path data = data(record.sequence());
                if (!record.delete() && (!Files.exists(data) || Files.size(data) != record.size())) {
                    throw new IOException("its data file is missing or short");
                }
                // a record from before ETags were content MD5s: the local copy's MD5 is what S3 will report
                writes.add(new Replayed(record, record.etag() != null || record.delete() ? record.etag() : Etags.ofFile(data),
                        Files.exists(sentMark(record.sequence()))));
                replayed.add(record.sequence());
                max = Math.max(max, record.sequence());
            } catch (IOException | IllegalArgumentException e) {
                // Records are renamed into place after their data is fsync'd, so this is damage, not a crash.
                LOG.error("write-back record {} cannot be replayed ({}); it is left in place for inspection", r, e.getMessage());
            }
        }
        try (Stream<Path> list = Files.list(journalDir)) {
            for (Path mark : list.filter(p -> p.getFileName().toString().endsWith(".sent")).toList()) {
                String name = mark.getFileName().toString();
                if (!replayed.contains(Long.parseLong(name.substring(0, name.indexOf('.'))))) {
                    Files.deleteIfExists(mark); // its write is durable (the record went first)
                }
            }
        }
        try (Stream<Path> list = Files.list(dataDir)) {
            for (Path d : list.toList()) {
                String name = d.getFileName().toString();
                long seq = Long.parseLong(name.substring(0, name.indexOf('.')));
                max = Math.max(max, seq);
                if (!replayed.contains(seq) && !Files.exists(record(seq))) {
                    Files.deleteIfExists(d); // data written but never acknowledged
                }
            }
        }
        return new Replay(writes, max + 1);
    }

    /**
     * Journals a write: {@code body}'s bytes as its data (its spool file moved in when it gives one away, else a copy),
     * then its record, each fsync'd and renamed into place. The
     * record carries the ETag the object will have in the store: {@code givenEtag} (a multipart upload's), else the
     * MD5 of the bytes, and the time its bytes were kept. Fails with a {@link StoreException}, leaving nothing behind: 400 when the body yields another
     * length than it declares, 507 when the disk cannot take it.
     */
    WriteRecord write(long sequence, ObjectKey key, PutBody body, List<Long> partSizes, String givenEtag, String after) throws StoreException {
        Path tempData = tmpDir.resolve(sequence + ".obj");
        Path tempRecord = tmpDir.resolve(sequence + ".rec");
        try {
            Placed placed = place(key, body, tempData, givenEtag == null);
            String etag = givenEtag != null ? givenEtag : placed.md5();
            WriteRecord record = new WriteRecord(sequence, key, body.length(), placed.crc32c(), clock.now(), etag, partSizes,
                    body.attributes(), false, after);
            Files.move(tempData, data(sequence), StandardCopyOption.ATOMIC_MOVE);
            writeSynced(tempRecord, record.encode());
            Files.move(tempRecord, record(sequence), StandardCopyOption.ATOMIC_MOVE);
            fsyncDirectory(journalDir);
            return record;
        } catch (IOException | RuntimeException failure) {
            deleteQuietly(tempData);
            deleteQuietly(tempRecord);
            deleteQuietly(data(sequence));
            if (failure instanceof StoreException se) {
                throw se;
            }
            throw new StoreException(StoreException.Kind.FATAL, 507, "cannot keep " + key + " on local disk ("
                    + failure.getMessage() + "); nothing was acknowledged", failure);
        }
    }

    /** A body's bytes placed in a file, synced, with their CRC32C and MD5 (hex; null when not asked for and not known). */
    record Placed(int crc32c, String md5) {
    }

    /**
     * Puts {@code body}'s bytes at {@code target} (which must not exist), synced: its spool file moved there when it
     * gives one away on this file system with the digests asked for ({@code needMd5}: the MD5 too), so the bytes are
     * written once; else copied, hashed on the way. 400 when a copied body yields another length than it declares.
     */
    static Placed place(ObjectKey key, PutBody body, Path target, boolean needMd5) throws IOException {
        PutBody.Spool spool = body.spool();
        if (spool != null && (spool.md5() != null || !needMd5) && moved(spool.file(), target, body.length())) {
            try (FileChannel out = FileChannel.open(target, StandardOpenOption.WRITE)) {
                out.force(true);
            }
            return new Placed(spool.crc32c(), spool.md5());
        }
        CRC32C sum = new CRC32C();
        MessageDigest md5 = Etags.md5();
        try (FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                InputStream in = body.open()) {
            byte[] buf = new byte[1 << 16];
            long length = 0;
            for (int n; (n = in.read(buf)) > 0; ) {
                sum.update(buf, 0, n);
                md5.update(buf, 0, n);
                ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
                while (bb.hasRemaining()) {
                    out.write(bb);
                }
                length += n;
            }
            if (length != body.length()) {
                throw new StoreException(StoreException.Kind.FATAL, 400, "body of " + key + " yielded " + length
                        + " bytes, not the declared " + body.length(), null);
            }
            out.force(true);
        }
        return new Placed((int) sum.getValue(), Etags.ofDigest(md5.digest()));
    }

    /**
     * Moves {@code spool} to {@code target} when it holds {@code length} bytes and lies on the same file system;
     * false, leaving it where it is, otherwise (the move would be a copy).
     */
    private static boolean moved(Path spool, Path target, long length) throws IOException {
        try {
            if (Files.size(spool) != length) {
                return false;
            }
            Files.move(spool, target, StandardCopyOption.ATOMIC_MOVE);
            return true;
        } catch (AtomicMoveNotSupportedException | NoSuchFileException e) {
            return false;
        }
    }

    /** Journals a delete waiting behind pending writes (its record, fsync'd and renamed); 507, leaving nothing, when the disk cannot. */
    void delete(WriteRecord deletion) throws StoreException {
        Path tempRecord = tmpDir.resolve(deletion.sequence() + ".rec");
        try {
            writeSynced(tempRecord, deletion.encode());
            Files.move(tempRecord, record(deletion.sequence()), StandardCopyOption.ATOMIC_MOVE);
            fsyncDirectory(journalDir);
        } catch (IOException | RuntimeException failure) {
            deleteQuietly(tempRecord);
            throw new StoreException(StoreException.Kind.FATAL, 507, "cannot journal the delete of " + deletion.key() + " on local disk ("
                    + failure.getMessage() + "); nothing was deleted", failure);
        }
    }

    /** Removes the record of write {@code sequence}: once it is durable, a restart no longer uploads it. */
    void dropRecord(long sequence) throws IOException {
        Files.deleteIfExists(record(sequence));
        Files.deleteIfExists(sentMark(sequence));
    }

    /** Removes the local copy of write {@code sequence}; a reader still holding it falls back to the store. */
    void dropData(long sequence) throws IOException {
        Files.deleteIfExists(data(sequence));
    }

    static void writeSynced(Path file, byte[] bytes) throws IOException {
        try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer bb = ByteBuffer.wrap(bytes);
            while (bb.hasRemaining()) {
                out.write(bb);
            }
            out.force(true);
        }
    }

    static void fsyncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException ignored) {
            // not every file system lets a directory be opened; the rename is still atomic
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // a temporary: deleted at the next open
        }
    }
}
