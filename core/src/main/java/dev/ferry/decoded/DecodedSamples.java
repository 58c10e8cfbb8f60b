package dev.ferry.decoded;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.CRC32C;

/**
 * Decoded samples on the node's disk, within a quota of bytes: one file per sample under {@code root/ab/<id>}, written
 * to a temporary name and renamed, never uploaded anywhere. Each file carries its {@link DecodedKey} and a CRC32C of
 * all it holds, checked on every read: a flipped byte, a file cut short or one holding another key is a miss (and is
 * deleted), never a wrong sample.
 *
 * <p>Which samples stay is the plan's: each entry has its next use (an ordinal of the job's order; smaller is sooner,
 * {@link Long#MAX_VALUE} unknown), given when it is stored and again when it is read. When the quota is full, an
 * offered sample takes the room of those used after it, farthest first; one used later than all of them is refused.
 * Entries found on disk at start have no known next use until read. Thread-safe.
 */
public final class DecodedSamples implements Closeable {
    /** What the status shows. */
    public record Stats(long quotaBytes, long usedBytes, long entries, long hits, long misses, long stored, long refused,
            long evicted, long corrupt, long stale) {
    }

    /** A decoded sample read back: its bytes, and the seconds its decode took when it was stored. */
    public record Hit(byte[] value, double decodeSeconds) {
    }

    private static final byte[] MAGIC = "ferry-decoded-1\n".getBytes(StandardCharsets.US_ASCII);
    /** Magic, CRC, key length; then key, decode seconds, value length, value. */
    private static final int FIXED = MAGIC.length + 4 + 4 + 8 + 4;

    private static final class Entry {
        final String id;
        final long bytes;
        final long seq;
        long nextUse;
        boolean ready;

        Entry(String id, long bytes, long nextUse, long seq) {
            this.id = id;
            this.bytes = bytes;
            this.nextUse = nextUse;
            this.seq = seq;
        }
    }

    private final Path root;
    private final Object lock = new Object();
    private final Map<String, Entry> entries = new HashMap<>();
    /** Soonest next use first; the last is the first to leave. */
    private final TreeSet<Entry> byNextUse = new TreeSet<>(Comparator.comparingLong((Entry e) -> e.nextUse).thenComparingLong(e -> e.seq));
    private long quota;
    private long used;
    private long seq;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder stored = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder evicted = new LongAdder();
    private final LongAdder corrupt = new LongAdder();
    private final LongAdder stale = new LongAdder();

    /** The decoded samples under {@code root} (made if missing; what is there is kept, its headers checked), holding at most {@code quota} bytes. */
    public DecodedSamples(Path root, long quota) throws IOException {
        if (quota < 0) {
            throw new IllegalArgumentException("the decoded samples' quota must be at least 0, not " + quota);
        }
        this.root = root;
        this.quota = quota;
        Files.createDirectories(root);
        recover();
    }

    private Path path(String id) {
        return root.resolve(id.substring(0, 2)).resolve(id);
    }

    /**
     * Stores {@code value}, the decode of {@code key} that took {@code decodeSeconds}, to be used next at
     * {@code nextUse}; false when it was refused (the quota is full of samples used sooner, or it is larger than the
     * quota). A key already held keeps its bytes and takes the new next use.
     */
    public boolean put(DecodedKey key, byte[] value, double decodeSeconds, long nextUse) throws IOException {
        byte[] file = encode(key, value, decodeSeconds);
        String id = key.id();
        Entry e;
        List<Entry> out;
        synchronized (lock) {
            Entry old = entries.get(id);
            if (old != null) {
                reschedule(old, nextUse);
                return true;
            }
            out = victims(file.length, nextUse);
            if (out == null) {
                refused.increment();
                return false;
            }
            out.forEach(this::removeLocked);
            e = new Entry(id, file.length, nextUse, seq++);
            entries.put(id, e);
            byNextUse.add(e);
            used += file.length;
        }
        evicted.add(out.size());
        deleteFiles(out);
        Path path = path(id);
        Path tmp = path.resolveSibling(id + ".tmp" + e.seq);
        try {
            Files.createDirectories(path.getParent());
            Files.write(tmp, file);
            Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException x) {
            Files.deleteIfExists(tmp);
            remove(e);
            throw x;
        }
        boolean kept;
        synchronized (lock) {
            kept = entries.get(id) == e;
            e.ready = kept;
        }
        if (!kept) { // evicted while it was written
            Files.deleteIfExists(path);
            return false;
        }
        stored.increment();
        return true;
    }

    /**
     * The decode of {@code key}, null when none is held or the one held fails its check (then it is deleted and
     * counted corrupt). A hit takes {@code nextUse} as the entry's next use.
     */
    public Hit get(DecodedKey key, long nextUse) throws IOException {
        String id = key.id();
        Entry e;
        synchronized (lock) {
            e = entries.get(id);
        }
        if (e == null || !e.ready) {
            misses.increment();
            return null;
        }
        Hit hit;
        try {
            hit = decode(Files.readAllBytes(path(id)), key);
        } catch (NoSuchFileException gone) {
            hit = null;
        }
        if (hit == null) {
            corrupt.increment();
            misses.increment();
            remove(e);
            Files.deleteIfExists(path(id));
            return null;
        }
        synchronized (lock) {
            if (entries.get(id) == e) {
                reschedule(e, nextUse);
            }
        }
        hits.increment();
        return hit;
    }

    /** True when a decode of {@code key} is held (not checked: a read checks it). */
    public boolean holds(DecodedKey key) {
        synchronized (lock) {
            Entry e = entries.get(key.id());
            return e != null && e.ready;
        }
    }

    /** Deletes the decode of {@code key}, which is stale (its object changed); true when one was held. */
    public boolean dropStale(DecodedKey key) throws IOException {
        Entry e;
        synchronized (lock) {
            e = entries.get(key.id());
            if (e == null) {
                return false;
            }
            removeLocked(e);
        }
        stale.increment();
        Files.deleteIfExists(path(e.id));
        return true;
    }

    /** Sets the quota; when more is held, entries leave, farthest next use first, until it fits. */
    public void quota(long bytes) throws IOException {
        List<Entry> out = new ArrayList<>();
        synchronized (lock) {
            quota = Math.max(0, bytes);
            while (used > quota && !byNextUse.isEmpty()) {
                Entry e = byNextUse.last(); // the farthest next use
                removeLocked(e);
                out.add(e);
            }
        }
        evicted.add(out.size());
        deleteFiles(out);
    }

    public Stats stats() {
        synchronized (lock) {
            return new Stats(quota, used, entries.size(), hits.sum(), misses.sum(), stored.sum(), refused.sum(), evicted.sum(),
                    corrupt.sum(), stale.sum());
        }
    }

    /** Entries that leave so that {@code bytes} used at {@code nextUse} fit, all used after it; null when they cannot make the room. */
    private List<Entry> victims(long bytes, long nextUse) {
        if (bytes > quota) {
            return null;
        }
        List<Entry> out = new ArrayList<>();
        long free = quota - used;
        Iterator<Entry> farthest = byNextUse.descendingIterator();
        while (free < bytes) {
            if (!farthest.hasNext()) {
                return null;
            }
            Entry e = farthest.next();
            if (e.nextUse <= nextUse) {
                return null; // everything left is needed as soon or sooner
            }
            out.add(e);
            free += e.bytes;
        }
        return out;
    }

    private void reschedule(Entry e, long nextUse) {
        byNextUse.remove(e);
        e.nextUse = nextUse;
        byNextUse.add(e);
    }

    private void remove(Entry e) {
        synchronized (lock) {
            if (entries.get(e.id) == e) {
                removeLocked(e);
            }
        }
    }

    private void removeLocked(Entry e) {
        entries.remove(e.id);
        byNextUse.remove(e);
        used -= e.bytes;
    }

    private void deleteFiles(List<Entry> gone) throws IOException {
        for (Entry e : gone) {
            Files.deleteIfExists(path(e.id));
        }
    }

    static byte[] encode(DecodedKey key, byte[] value, double decodeSeconds) {
        byte[] k = key.canonical().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(FIXED + k.length + value.length);
        b.put(MAGIC).putInt(0).putInt(k.length).put(k).putDouble(decodeSeconds).putInt(value.length).put(value);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), MAGIC.length + 4, b.capacity() - MAGIC.length - 4);
        b.putInt(MAGIC.length, (int) crc.getValue());
        return b.array();
    }

    /** The entry in {@code file} when it checks and is {@code key}'s; null otherwise. */
    static Hit decode(byte[] file, DecodedKey key) {
        if (file.length < FIXED || !Arrays.equals(file, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(file);
        int crcStored = b.getInt(MAGIC.length);
        CRC32C crc = new CRC32C();
        crc.update(file, MAGIC.length + 4, file.length - MAGIC.length - 4);
        if ((int) crc.getValue() != crcStored) {
            return null;
        }
        b.position(MAGIC.length + 4);
        int keyLength = b.getInt();
        if (keyLength < 0 || keyLength > file.length - FIXED) {
            return null;
        }
        String canonical = new String(file, b.position(), keyLength, StandardCharsets.UTF_8);
        if (!canonical.equals(key.canonical())) {
            return null;
        }
        b.position(b.position() + keyLength);
        double seconds = b.getDouble();
        int length = b.getInt();
        if (length != b.remaining()) {
            return null;
        }
        return new Hit(Arrays.copyOfRange(file, b.position(), file.length), seconds);
    }

    /** The bytes an entry of {@code value} bytes under {@code key} takes on disk. */
    public static long entryBytes(DecodedKey key, long value) {
        return FIXED + key.canonical().getBytes(StandardCharsets.UTF_8).length + value;
    }

    /** The file begins as an entry does (the whole of it is checked when it is read). */
    private static boolean startsAsEntry(Path f) throws IOException {
        try (var in = Files.newInputStream(f)) {
            return Arrays.equals(in.readNBytes(MAGIC.length), MAGIC) && Files.size(f) >= FIXED;
        }
    }

    /** Takes in the entries found on disk (their next use unknown), deleting files that are not whole entries. */
    private void recover() throws IOException {
        List<Entry> found = new ArrayList<>();
        try (DirectoryStream<Path> folders = Files.newDirectoryStream(root)) {
            for (Path folder : folders) {
                if (!Files.isDirectory(folder)) {
                    continue;
                }
                try (DirectoryStream<Path> files = Files.newDirectoryStream(folder)) {
                    for (Path f : files) {
                        String name = f.getFileName().toString();
                        if (name.length() != 40 || !name.startsWith(folder.getFileName().toString()) || !startsAsEntry(f)) {
                            Files.deleteIfExists(f); // a write cut short (a temporary name), or not an entry
                            continue;
                        }
                        found.add(new Entry(name, Files.size(f), Long.MAX_VALUE, 0));
                    }
                }
            }
        }
        synchronized (lock) {
            for (Entry e : found) {
                Entry placed = new Entry(e.id, e.bytes, Long.MAX_VALUE, seq++);
                placed.ready = true;
                entries.put(placed.id, placed);
                byNextUse.add(placed);
                used += placed.bytes;
            }
        }
        quota(quota);
    }

    @Override
    public void close() {
        // entries are whole files: nothing to flush, and they are found again at the next start
    }
}
