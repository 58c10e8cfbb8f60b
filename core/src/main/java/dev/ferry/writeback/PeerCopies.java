package dev.ferry.writeback;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Copies of other daemons' acknowledged writes that this node keeps for them (the {@code peer} durability level): a
 * write a member acknowledged as on two disks is on its own and here, fsync'd, until its upload is durable. The
 * member that wrote it releases the copy then; when that member is gone (its disk with it), this node adopts the
 * copies into its own write-back, in the order they were written, and uploads them.
 *
 * <p>On disk: {@code <dir>/<origin journal id>/origin} (the origin's URL), and per copy {@code <sequence>.obj} (the
 * bytes) and {@code <sequence>.rec} (its {@link WriteRecord}, with the origin's sequence), each fsync'd and renamed
 * into place, the record last. Thread-safe: one lock.
 */
final class PeerCopies {
    private final Path dir;
    private final Object lock = new Object();

    private final long quota;

    /** Copies in {@code dir} (created if missing), at most {@code quota} bytes of them; temporaries a crash left go. */
    PeerCopies(Path dir, long quota) throws IOException {
        this.dir = Files.createDirectories(dir);
        this.quota = quota;
        try (Stream<Path> origins = Files.list(this.dir)) {
            for (Path origin : origins.filter(Files::isDirectory).toList()) {
                try (Stream<Path> files = Files.list(origin)) {
                    for (Path f : files.toList()) {
                        String name = f.getFileName().toString();
                        boolean orphan = name.endsWith(".obj") && !Files.exists(f.resolveSibling(name.replace(".obj", ".rec")));
                        if (name.endsWith(".tmp") || name.endsWith(".adopt") || orphan) {
                            Files.deleteIfExists(f); // never acknowledged as kept, or a half-adopted link
                        }
                    }
                }
            }
        }
    }

    private static void checkId(String originId) throws StoreException {
        if (originId == null || !originId.matches("[A-Za-z0-9-]{1,64}")) {
            throw new StoreException(StoreException.Kind.FATAL, 400, "InvalidArgument", "not a journal id: " + originId, null);
        }
    }

    /** The origins this node holds copies for: journal id to URL. */
    Map<String, String> origins() throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        synchronized (lock) {
            try (Stream<Path> s = Files.list(dir)) {
                for (Path origin : s.filter(Files::isDirectory).sorted().toList()) {
                    Path url = origin.resolve("origin");
                    if (Files.exists(url) && !records(origin).isEmpty()) {
                        out.put(origin.getFileName().toString(), Files.readString(url).trim());
                    }
                }
            }
        }
        return out;
    }

    /** How many copies are held, and their bytes. */
    long[] held() throws IOException {
        long count = 0;
        long bytes = 0;
        synchronized (lock) {
            try (Stream<Path> s = Files.list(dir)) {
                for (Path origin : s.filter(Files::isDirectory).toList()) {
                    for (Path rec : records(origin)) {
                        count++;
                        bytes += Files.size(data(rec));
                    }
                }
            }
        }
        return new long[] {count, bytes};
    }

    /**
     * Keeps a copy of {@code origin}'s write {@code record} (its sequence the origin's), whose bytes are {@code body}:
     * fsync'd, checked against the record's CRC32C (a spooled body's as it arrived, else read), then the record. 400
     * when the bytes do not match the record, 507 when the disk cannot take them; nothing is left behind either way.
     */
    void keep(String originId, String originUrl, WriteRecord record, PutBody body) throws IOException {
        checkId(originId);
        long kept = held()[1];
        if (kept + record.size() > quota) {
            throw new StoreException(StoreException.Kind.RETRYABLE, 507, "InsufficientStorage", "this node keeps " + kept
                    + " bytes of its peers' writes already; a copy of " + record.size() + " more would pass its write-back quota of "
                    + quota, null);
        }
        Path folder = dir.resolve(originId);
        Path tempData = folder.resolve(record.sequence() + ".obj.tmp");
        Path tempRecord = folder.resolve(record.sequence() + ".rec.tmp");
        synchronized (lock) {
            try {
                Files.createDirectories(folder);
                Path origin = folder.resolve("origin");
                if (!Files.exists(origin)) { // the origin's URL, written once with its first copy
                    Path tempOrigin = folder.resolve("origin.tmp");
                    Files.deleteIfExists(tempOrigin);
                    WriteJournal.writeSynced(tempOrigin, originUrl.getBytes(StandardCharsets.UTF_8));
                    Files.move(tempOrigin, origin, StandardCopyOption.ATOMIC_MOVE);
                }
                int crc = WriteJournal.place(record.key(), body, tempData, false).crc32c();
                if (crc != record.crc() || Files.size(tempData) != record.size()) {
                    throw new StoreException(StoreException.Kind.FATAL, 400, "BadDigest", "the copy of " + record.key() + " holds "
                            + Files.size(tempData) + " bytes of CRC32C " + Integer.toHexString(crc) + ", not the " + record.size()
                            + " bytes of CRC32C " + Integer.toHexString(record.crc()) + " its origin wrote", null);
                }
                Files.move(tempData, folder.resolve(record.sequence() + ".obj"), StandardCopyOption.ATOMIC_MOVE);
                WriteJournal.writeSynced(tempRecord, record.encode());
                Files.move(tempRecord, folder.resolve(record.sequence() + ".rec"), StandardCopyOption.ATOMIC_MOVE);
                WriteJournal.fsyncDirectory(folder);
            } catch (IOException | RuntimeException e) {
                Files.deleteIfExists(tempData);
                Files.deleteIfExists(tempRecord);
                if (e instanceof StoreException se) {
                    throw se;
                }
                throw new StoreException(StoreException.Kind.FATAL, 507, "InsufficientStorage", "cannot keep a copy of " + record.key()
                        + " on this node's disk (" + e.getMessage() + ")", e);
            }
        }
    }

    /** Lets go of {@code origin}'s copies of {@code key} up to {@code sequence}: the origin made them durable, or replaced them. */
    void release(String originId, ObjectKey key, long sequence) throws IOException {
        checkId(originId);
        Path folder = dir.resolve(originId);
        synchronized (lock) {
            if (!Files.isDirectory(folder)) {
                return;
            }
            for (Path rec : records(folder)) {
                WriteRecord r = read(rec);
                if (r.sequence() <= sequence && r.key().equals(key)) {
                    Files.deleteIfExists(rec);
                    Files.deleteIfExists(data(rec));
                }
            }
        }
    }

    /**
     * Takes {@code origin}'s copies into {@code writeBack} in the order the origin wrote them (each file given as a
     * hard link that the journal moves in, so the copy stays whole until its record is the journal's), then forgets
     * the origin; returns how many. A copy write-back refuses stays, for the next try; one the store already holds
     * newer, or the same, is let go.
     */
    int adopt(String originId, WriteBackStore writeBack) throws IOException {
        Path folder = dir.resolve(originId);
        int adopted = 0;
        synchronized (lock) {
            if (!Files.isDirectory(folder)) {
                return 0;
            }
            for (Path rec : records(folder)) {
                WriteRecord r = read(rec);
                Path data = data(rec);
                if (!Files.exists(data)) { // its bytes went in a crash after the journal took them: the journal has it
                    Files.deleteIfExists(rec);
                    continue;
                }
                Path link = data.resolveSibling(data.getFileName() + ".adopt");
                Files.deleteIfExists(link);
                Files.createLink(link, data);
                // a single PUT's ETag is its MD5; a multipart one's is not, and its bytes are hashed again
                PutBody body = PutBody.ofSpool(new PutBody.Spool(link, r.crc(), r.partSizes() == null ? r.etag() : null))
                        .withAttributes(r.attributes());
                try {
                    if (writeBack.adopt(r, body)) {
                        adopted++;
                    }
                } finally {
                    Files.deleteIfExists(link);
                }
                Files.deleteIfExists(rec);
                Files.deleteIfExists(data);
            }
            try (Stream<Path> s = Files.list(folder)) {
                for (Path p : s.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(folder);
        }
        return adopted;
    }

    /**
     * Lets go of {@code origin}'s copies whose write the store already holds (the same ETag): durable, though their
     * release never came (the origin restarted, or could not tell this node). Returns how many went.
     */
    int sweep(String originId, java.util.function.Predicate<WriteRecord> durable) throws IOException {
        checkId(originId);
        Path folder = dir.resolve(originId);
        int gone = 0;
        List<Path> recs;
        synchronized (lock) {
            if (!Files.isDirectory(folder)) {
                return 0;
            }
            recs = records(folder);
        }
        for (Path rec : recs) {
            WriteRecord r;
            try {
                r = read(rec);
            } catch (java.nio.file.NoSuchFileException e) {
                continue; // released meanwhile
            }
            if (durable.test(r)) { // asked outside the lock: a HEAD of the store
                release(originId, r.key(), r.sequence());
                gone++;
            }
        }
        return gone;
    }

    /** The records of {@code folder}, in the origin's sequence order. */
    private static List<Path> records(Path folder) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(folder)) {
            s.filter(p -> p.getFileName().toString().endsWith(".rec")).forEach(out::add);
        }
        out.sort(Comparator.comparingLong(p -> Long.parseLong(p.getFileName().toString().replace(".rec", ""))));
        return out;
    }

    private static Path data(Path record) {
        return record.resolveSibling(record.getFileName().toString().replace(".rec", ".obj"));
    }

    private static WriteRecord read(Path record) throws IOException {
        try (InputStream in = Files.newInputStream(record)) {
            return WriteRecord.decode(in);
        }
    }
}
