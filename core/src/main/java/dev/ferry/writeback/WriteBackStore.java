package dev.ferry.writeback;

import dev.ferry.store.ByteRange;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.Etags;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.Uploads;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Write-back in front of an object store: a PUT is acknowledged once its bytes and its journal record are
 * fsync'd on local disk ({@link Durability#LOCAL}), then uploaded in the background; {@link #flush} is the
 * fence that returns when every write acknowledged before it is durable.
 *
 * <ul>
 *   <li><b>Journal.</b> Each write is a data file and a journal record (key, size, CRC32C), both written to a
 *       temporary name, fsync'd and renamed, the record last: a record on disk means the write was
 *       acknowledged, and its data is complete. On open, records are replayed and their uploads resume.
 *   <li><b>Order.</b> Writes are spread over {@code uploaders} lanes by key, each lane uploading in order,
 *       so a key's writes reach the store in the order they were acknowledged.
 *   <li><b>Faults.</b> A transient failure (outage, throttling) is retried with backoff until it succeeds;
 *       a refusal (403, 400), or an upload the store answers with other bytes or another size than were
 *       acknowledged (it is never called durable), marks the write FAILED, reported by status and the fence,
 *       and kept locally until a later write or delete of its key is durable. A disk that cannot take a write
 *       fails the PUT cleanly: nothing half-written is acknowledged.
 *   <li><b>Reads</b> of a key with a write not yet uploaded (or failed) are served from the local copy, and
 *       listings show it ({@link #pendingIn}).
 *   <li><b>Deletes</b> of a key with writes still pending are journaled as writes are, and deleted in the
 *       store after them (so a pending upload never brings a deleted key back); reads see the key gone at
 *       once. A delete of any other key goes to the store directly.
 *   <li><b>Quota.</b> Past {@code quota} pending bytes, writes go through to the store directly, except to
 *       a key with a write still pending, which stays in order behind it.
 * </ul>
 * Thread-safe.
 */
public final class WriteBackStore extends ForwardingObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(WriteBackStore.class);
    /** Largest object S3 takes in one PUT; a larger PUT (possible only from code, not the daemon) goes up in parts. */
    private static final long MAX_SINGLE_PUT = 5L << 30;

    private final class Entry {
        final WriteRecord record;
        final long sequence;
        final ObjectKey key;
        final long size;
        final Instant written;
        final String etag;
        /** A DELETE waiting behind the key's pending writes: no data, and the key reads as gone. */
        final boolean delete;
        volatile Durability durability = Durability.LOCAL;
        volatile String error;
        /** Taken out of {@link #entries} (and its bytes out of the pending count); guarded by {@code lock}. */
        boolean dropped;

        Entry(WriteRecord record, String etag) {
            this.record = record;
            this.sequence = record.sequence();
            this.key = record.key();
            this.size = record.size();
            this.written = record.written();
            this.etag = etag;
            this.delete = record.delete();
        }

        /** The object as reads see it; null for a delete. */
        ObjectMeta meta() {
            return delete ? null : new ObjectMeta(key, size, etag, null, written, record.attributes());
        }

        Path data() {
            return dataDir.resolve(sequence + ".obj");
        }

        Path record() {
            return journalDir.resolve(sequence + ".rec");
        }

        WriteStatus status() {
            return new WriteStatus(sequence, key, size, durability, error, etag, delete);
        }
    }

    private final WriteBackConfig config;
    private final Clock clock;
    private final Path dataDir;
    private final Path journalDir;
    private final Path tmpDir;
    private final Object lock = new Object();
    private final TreeMap<Long, Entry> entries = new TreeMap<>();
    private final Map<ObjectKey, Entry> latestLocal = new HashMap<>();
    private long nextSequence;
    private long pendingBytes;
    private final List<LinkedBlockingDeque<Entry>> lanes = new ArrayList<>();
    private final ExecutorService uploaders;
    private volatile boolean closed;
    private final LongAdder uploadedBytes = new LongAdder();
    private final LongAdder uploadNanos = new LongAdder();
    private final LongAdder writeThroughs = new LongAdder();
    private final Scratch scratch;

    public WriteBackStore(ObjectStore upstream, WriteBackConfig config) throws IOException {
        this(upstream, config, Clock.system());
    }

    /** Write-back whose records are stamped, uploads timed and backoffs waited on {@code clock}. */
    public WriteBackStore(ObjectStore upstream, WriteBackConfig config, Clock clock) throws IOException {
        super(upstream);
        this.config = config;
        this.clock = Objects.requireNonNull(clock, "clock is null");
        this.dataDir = Files.createDirectories(config.dir().resolve("data"));
        this.journalDir = Files.createDirectories(config.dir().resolve("journal"));
        this.tmpDir = Files.createDirectories(config.dir().resolve("tmp"));
        try (Stream<Path> temps = Files.list(tmpDir)) {
            for (Path t : temps.toList()) {
                Files.deleteIfExists(t);
            }
        }
        replay();
        if (config.scratchBucket() != null && config.scratchQuota() > 0) {
            scratch = new Scratch(config.dir().resolve("scratch"), config.scratchBucket(), config.scratchQuota(), config.scratchTtl(), clock);
        } else {
            scratch = null;
        }
        AtomicInteger threads = new AtomicInteger();
        this.uploaders = Executors.newFixedThreadPool(config.uploaders(), r -> {
            Thread t = new Thread(r, "ferry-writeback-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        for (int i = 0; i < config.uploaders(); i++) {
            LinkedBlockingDeque<Entry> lane = new LinkedBlockingDeque<>();
            lanes.add(lane);
            uploaders.submit(() -> drain(lane));
        }
        synchronized (lock) {
            for (Entry e : entries.values()) {
                lane(e.key).add(e);
            }
        }
    }

    /** Reads back the journal: every record whose data is complete is pending again. */
    private void replay() throws IOException {
        List<Path> records;
        try (Stream<Path> list = Files.list(journalDir)) {
            records = list.filter(p -> p.getFileName().toString().endsWith(".rec")).toList();
        }
        long max = 0;
        for (Path r : records) {
            try (InputStream in = Files.newInputStream(r)) {
                WriteRecord record = WriteRecord.decode(in);
                Path data = dataDir.resolve(record.sequence() + ".obj");
                if (!record.delete() && (!Files.exists(data) || Files.size(data) != record.size())) {
                    throw new IOException("its data file is missing or short");
                }
                // a record from before ETags were content MD5s: the local copy's MD5 is what S3 will report
                Entry e = new Entry(record, record.etag() != null || record.delete() ? record.etag() : Etags.ofFile(data));
                entries.put(e.sequence, e);
                latestLocal.merge(e.key, e, (a, b) -> a.sequence > b.sequence ? a : b);
                pendingBytes += e.size;
                max = Math.max(max, e.sequence);
            } catch (IOException | IllegalArgumentException e) {
                // Records are renamed into place after their data is fsync'd, so this is damage, not a crash.
                LOG.error("write-back record {} cannot be replayed ({}); it is left in place for inspection", r, e.getMessage());
            }
        }
        try (Stream<Path> list = Files.list(dataDir)) {
            for (Path d : list.toList()) {
                String name = d.getFileName().toString();
                long seq = Long.parseLong(name.substring(0, name.indexOf('.')));
                max = Math.max(max, seq);
                if (!entries.containsKey(seq) && !Files.exists(journalDir.resolve(seq + ".rec"))) {
                    Files.deleteIfExists(d); // data written but never acknowledged
                }
            }
        }
        nextSequence = max + 1;
        if (!entries.isEmpty()) {
            LOG.info("resuming {} pending uploads ({} bytes) from {}", entries.size(), pendingBytes, config.dir());
        }
    }

    private LinkedBlockingDeque<Entry> lane(ObjectKey key) {
        return lanes.get(Math.floorMod(key.hashCode(), lanes.size()));
    }

    /**
     * A PUT: acknowledged when local and journaled (or, past the quota, when written through). The status
     * carries the ETag the object will have in the store: the MD5 of its bytes.
     */
    public WriteStatus write(ObjectKey key, PutBody body) throws IOException {
        return write(key, body, null, null);
    }

    /**
     * A multipart upload assembled locally: its bytes ({@code body}, a file) were sent in parts of
     * {@code partSizes} and answered {@code etag}; they are uploaded in the same parts, so the store reports
     * that ETag too.
     */
    public WriteStatus writeParts(ObjectKey key, PutBody body, List<Long> partSizes, String etag) throws IOException {
        if (body.file() == null) {
            throw new IllegalArgumentException("a multipart write needs its bytes in a file: " + key);
        }
        return write(key, body, List.copyOf(partSizes), etag);
    }

    private WriteStatus write(ObjectKey key, PutBody body, List<Long> partSizes, String etag) throws IOException {
        if (closed) {
            throw new IOException("write-back store is closed");
        }
        if (isScratch(key)) {
            return writeScratch(key, body);
        }
        long sequence = -1;
        synchronized (lock) {
            // past the quota a write goes through, unless an earlier write of its key is still pending: it
            // would land first and be overwritten by the older one (the quota is exceeded instead)
            if (pendingBytes + body.length() > config.quota() && !latestLocal.containsKey(key)) {
                writeThroughs.increment();
                if (writeThroughs.sum() == 1 || writeThroughs.sum() % 100 == 0) {
                    LOG.warn("write-back quota of {} bytes is full; writing {} through to the object store", config.quota(), key);
                }
                // fall through below, outside the lock
            } else {
                pendingBytes += body.length(); // reserve now; released if the local write fails
                sequence = nextSequence++;
            }
        }
        if (sequence >= 0) {
            return writeLocal(key, body, sequence, partSizes, etag);
        }
        ObjectMeta meta = partSizes == null ? delegate.put(key, body)
                : Uploads.putParts(delegate, key, body.file(), partSizes, body.attributes(), 4);
        return new WriteStatus(-1, key, meta.size(), Durability.DURABLE, null, meta.etag());
    }

    /** Writes data and record (temp, fsync, rename; the record last), outside the lock. */
    private WriteStatus writeLocal(ObjectKey key, PutBody body, long sequence, List<Long> partSizes, String givenEtag) throws IOException {
        Path tempData = tmpDir.resolve(sequence + ".obj");
        Path tempRecord = tmpDir.resolve(sequence + ".rec");
        int crc;
        Entry e;
        try {
            CRC32C sum = new CRC32C();
            java.security.MessageDigest md5 = Etags.md5();
            try (FileChannel out = FileChannel.open(tempData, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                    InputStream in = body.open()) {
                byte[] buf = new byte[1 << 16];
                long written = 0;
                for (int n; (n = in.read(buf)) > 0; ) {
                    sum.update(buf, 0, n);
                    md5.update(buf, 0, n);
                    ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
                    while (bb.hasRemaining()) {
                        out.write(bb);
                    }
                    written += n;
                }
                if (written != body.length()) {
                    throw new StoreException(StoreException.Kind.FATAL, 400, "body of " + key + " yielded " + written
                            + " bytes, not the declared " + body.length(), null);
                }
                out.force(true);
            }
            crc = (int) sum.getValue();
            String etag = givenEtag != null ? givenEtag : Etags.ofDigest(md5.digest());
            e = new Entry(new WriteRecord(sequence, key, body.length(), crc, clock.now(), etag, partSizes, body.attributes()), etag);
            Files.move(tempData, e.data(), StandardCopyOption.ATOMIC_MOVE);
            writeSynced(tempRecord, e.record.encode());
            Files.move(tempRecord, e.record(), StandardCopyOption.ATOMIC_MOVE);
            fsyncDirectory(journalDir);
        } catch (IOException | RuntimeException failure) {
            Files.deleteIfExists(tempData);
            Files.deleteIfExists(tempRecord);
            Files.deleteIfExists(dataDir.resolve(sequence + ".obj"));
            synchronized (lock) {
                pendingBytes -= body.length();
            }
            if (failure instanceof StoreException se) {
                throw se;
            }
            throw new StoreException(StoreException.Kind.FATAL, 507, "cannot keep " + key + " on local disk ("
                    + failure.getMessage() + "); nothing was acknowledged", failure);
        }
        enqueue(e);
        return e.status();
    }

    private static void writeSynced(Path file, byte[] bytes) throws IOException {
        try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer bb = ByteBuffer.wrap(bytes);
            while (bb.hasRemaining()) {
                out.write(bb);
            }
            out.force(true);
        }
    }

    private static void fsyncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException ignored) {
            // not every file system lets a directory be opened; the rename is still atomic
        }
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        WriteStatus s = write(key, body);
        return new ObjectMeta(key, s.size(), s.etag(), null, clock.now(), body.attributes());
    }

    /** Uploads a lane's writes in order, retrying transient failures with backoff. */
    private void drain(LinkedBlockingDeque<Entry> lane) {
        while (!closed) {
            Entry e;
            try {
                e = lane.take();
            } catch (InterruptedException ie) {
                return;
            }
            long backoff = 50;
            while (!closed) {
                long t0 = clock.nanoTime();
                try {
                    upload(e);
                    uploadNanos.add(clock.nanoTime() - t0);
                    uploadedBytes.add(e.size);
                    finish(e);
                    break;
                } catch (StoreException failure) {
                    if (failure.isRetryable()) {
                        LOG.debug("upload of {} failed ({}), retrying in {} ms", e.key, failure.getMessage(), backoff);
                    } else {
                        synchronized (lock) {
                            e.error = failure.getMessage();
                            e.durability = Durability.FAILED;
                            lock.notifyAll();
                        }
                        LOG.error("the upload of {} failed for good ({}); it stays on local disk at {}", e.key, failure.getMessage(),
                                e.delete ? "(a delete)" : e.data());
                        break;
                    }
                } catch (IOException failure) {
                    LOG.debug("upload of {} failed ({}), retrying in {} ms", e.key, failure.getMessage(), backoff);
                }
                try {
                    clock.sleep(Duration.ofMillis(ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1)));
                } catch (InterruptedException ie) {
                    return;
                }
                backoff = Math.min(config.maxBackoff().toMillis(), backoff * 2);
            }
        }
    }

    /**
     * Uploads a write so that the store reports the ETag its client was answered: one PUT, or the client's
     * parts; a delete deletes. What the store answers is compared with what was acknowledged: another size is
     * a failed write (never durable). A single PUT carries its MD5, so a store that checks answers (the daemon's
     * {@link dev.ferry.store.chain.CheckedWrites}) compares the bytes too.
     */
    private void upload(Entry e) throws IOException {
        if (e.delete) {
            delegate.delete(e.key); // S3 answers a delete of a missing key 204: a retried delete is no error
            return;
        }
        ObjectAttributes attributes = e.record.attributes();
        ObjectMeta stored;
        if (e.record.partSizes() != null) {
            stored = Uploads.putParts(delegate, e.key, e.data(), e.record.partSizes(), attributes, 4);
        } else if (e.size <= MAX_SINGLE_PUT) {
            stored = delegate.put(e.key, PutBody.ofFile(e.data()).withAttributes(attributes).withEtag(e.etag));
        } else {
            stored = Uploads.putParts(delegate, e.key, e.data(), partsOf(e.size), attributes, 4);
        }
        if (stored.size() != e.size) {
            throw new StoreException(StoreException.Kind.FATAL, 502, "the object store holds " + stored.size() + " bytes at " + e.key
                    + ", not the " + e.size + " bytes acknowledged: it stored something else, so the write failed", null);
        }
        if (!stored.etag().equals(e.etag)) {
            // a store that does not use content MD5s as ETags (S3 with SSE-KMS, say): the size is right, the ETag moves
            LOG.warn("the object store gave {} the ETag {}, not the {} its writer was answered; If-Match with the old one will fail",
                    e.key, stored.etag(), e.etag);
        }
    }

    private List<Long> partsOf(long size) {
        List<Long> sizes = new ArrayList<>();
        for (long offset = 0; offset < size; offset += config.partSize()) {
            sizes.add(Math.min(config.partSize(), size - offset));
        }
        return sizes;
    }

    /**
     * The write is durable: its local copy and record go, readers go upstream again. Earlier writes of its key
     * that failed are replaced by it: they go too.
     */
    private void finish(Entry e) throws IOException {
        Files.deleteIfExists(e.record());
        List<Entry> replaced = new ArrayList<>();
        synchronized (lock) {
            // the write and the failed ones it replaces leave the pending writes together: a fence taken in
            // between would otherwise find a failed write whose replacement is already gone, and say incomplete
            drop(e);
            for (Entry earlier : entries.headMap(e.sequence).values()) {
                if (earlier.key.equals(e.key) && earlier.durability == Durability.FAILED) {
                    replaced.add(earlier);
                }
            }
            for (Entry old : replaced) {
                drop(old);
                old.durability = Durability.SUPERSEDED;
            }
        }
        Files.deleteIfExists(e.data()); // a reader that still holds the entry falls back to upstream
        for (Entry old : replaced) {
            Files.deleteIfExists(old.record());
            Files.deleteIfExists(old.data());
            LOG.info("the failed write {} of {} is replaced by a later one, now durable", old.sequence, old.key);
        }
        synchronized (lock) {
            e.durability = Durability.DURABLE; // only now: a fence that returns leaves nothing of it behind
            lock.notifyAll();
        }
    }

    /** Makes a journaled write (or delete) pending: the latest of its key, queued on its key's lane for upload. */
    private void enqueue(Entry e) {
        synchronized (lock) {
            entries.put(e.sequence, e);
            latestLocal.put(e.key, e);
        }
        lane(e.key).add(e);
    }

    /** Takes {@code e} out of the pending writes, once. Call under {@code lock}. */
    private void drop(Entry e) {
        if (!e.dropped) {
            e.dropped = true;
            entries.remove(e.sequence);
            pendingBytes -= e.size;
            if (latestLocal.get(e.key) == e) {
                latestLocal.remove(e.key);
            }
        }
    }

    /**
     * The fence: waits until every write acknowledged before this call is durable or has failed for good,
     * at most {@code timeout} (null: no limit). Complete when none failed.
     */
    public FlushResult flush(Duration timeout) throws InterruptedIOException {
        return flush(key -> true, timeout);
    }

    /** The fence over the writes (and deletes) of the keys {@code which} accepts. */
    public FlushResult flush(java.util.function.Predicate<ObjectKey> which, Duration timeout) throws InterruptedIOException {
        long deadline = timeout == null ? Long.MAX_VALUE : clock.nanoTime() + timeout.toNanos();
        List<Entry> fence;
        synchronized (lock) {
            fence = entries.values().stream().filter(e -> which.test(e.key)).toList();
        }
        synchronized (lock) {
            while (true) {
                boolean done = fence.stream().allMatch(e -> e.durability != Durability.LOCAL);
                long left = deadline - clock.nanoTime();
                if (done || left <= 0) {
                    break;
                }
                try {
                    lock.wait(Math.max(1, Math.min(left / 1_000_000, 200)));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while waiting for uploads");
                }
            }
        }
        List<WriteStatus> statuses = fence.stream().map(Entry::status).toList();
        String firstError = statuses.stream().filter(s -> s.durability() == Durability.FAILED).map(s -> s.key() + ": " + s.error())
                .findFirst().orElse(null);
        boolean complete = statuses.stream().allMatch(s -> s.durability() == Durability.DURABLE || s.durability() == Durability.SUPERSEDED);
        return new FlushResult(complete, statuses, firstError);
    }

    // ---- scratch: node-local, never uploaded ----------------------------------------------------------

    private boolean isScratch(ObjectKey key) {
        return isScratchBucket(key.bucket());
    }

    private boolean isScratchBucket(String bucket) {
        return config.scratchBucket() != null && config.scratchBucket().equals(bucket);
    }

    private Scratch scratch() throws StoreException {
        if (scratch == null) {
            throw new StoreException(StoreException.Kind.FATAL, 507, "scratch bucket " + config.scratchBucket()
                    + " has no quota configured", null);
        }
        return scratch;
    }

    private WriteStatus writeScratch(ObjectKey key, PutBody body) throws IOException {
        ObjectMeta meta = scratch().put(key, body);
        return new WriteStatus(-1, key, meta.size(), Durability.LOCAL, null, meta.etag());
    }

    @Override
    public dev.ferry.store.ListPage list(dev.ferry.store.ListRequest request) throws IOException {
        if (!isScratchBucket(request.bucket())) {
            return delegate.list(request);
        }
        return scratch().list(request);
    }

    /**
     * A DELETE. With a write of {@code key} still pending (or failed), the delete is journaled and queued
     * behind it (fsync'd: acknowledged as a write is), and reads see the key gone at once; otherwise it goes
     * to the store now.
     */
    @Override
    public void delete(ObjectKey key) throws IOException {
        if (isScratch(key)) {
            scratch().delete(key);
            return;
        }
        if (closed) {
            throw new IOException("write-back store is closed");
        }
        long sequence;
        synchronized (lock) {
            Entry latest = latestLocal.get(key);
            if (latest == null) {
                sequence = -1;
            } else if (latest.delete) {
                return; // already deleted, waiting to reach the store
            } else {
                sequence = nextSequence++;
            }
        }
        if (sequence < 0) {
            delegate.delete(key);
            return;
        }
        Entry e = new Entry(WriteRecord.deletion(sequence, key, clock.now()), null);
        Path tempRecord = tmpDir.resolve(sequence + ".rec");
        try {
            writeSynced(tempRecord, e.record.encode());
            Files.move(tempRecord, e.record(), StandardCopyOption.ATOMIC_MOVE);
            fsyncDirectory(journalDir);
        } catch (IOException | RuntimeException failure) {
            Files.deleteIfExists(tempRecord);
            throw new StoreException(StoreException.Kind.FATAL, 507, "cannot journal the delete of " + key + " on local disk ("
                    + failure.getMessage() + "); nothing was deleted", failure);
        }
        enqueue(e);
    }

    public WriteBackStats stats() {
        synchronized (lock) {
            double oldest = entries.values().stream().filter(e -> e.durability == Durability.LOCAL).map(e -> e.written)
                    .min(Instant::compareTo).map(t -> Duration.between(t, clock.now()).toMillis() / 1000.0).orElse(0.0);
            long pending = entries.values().stream().filter(e -> e.durability == Durability.LOCAL).count();
            List<Entry> failed = entries.values().stream().filter(e -> e.durability == Durability.FAILED).toList();
            return new WriteBackStats(pendingBytes, pending, oldest, uploadedBytes.sum(), uploadNanos.sum() / 1e9,
                    writeThroughs.sum(), failed.size(), failed.isEmpty() ? null : failed.getFirst().key + ": " + failed.getFirst().error);
        }
    }

    // ---- reads see the writes --------------------------------------------------------------------------

    /** True when reads of {@code key} are served here (a write not yet uploaded, or scratch), not upstream. */
    public boolean holdsLocally(ObjectKey key) {
        return isScratch(key) || localCopy(key) != null;
    }

    /** True when a write to {@code bucket} is still only local (its bucket looks empty upstream, but is not). */
    public boolean holdsLocallyIn(String bucket) {
        synchronized (lock) {
            return latestLocal.values().stream().anyMatch(e -> !e.delete && e.key.bucket().equals(bucket));
        }
    }

    /** True when the latest of {@code key} is a delete waiting behind pending writes (the store still holds the key). */
    public boolean deletePending(ObjectKey key) {
        Entry e = localCopy(key);
        return e != null && e.delete;
    }

    /** True when a delete in {@code bucket} waits behind pending writes (its store still holds the key). */
    public boolean deletesPendingIn(String bucket) {
        synchronized (lock) {
            return latestLocal.values().stream().anyMatch(e -> e.delete && e.key.bucket().equals(bucket));
        }
    }

    /**
     * A key whose latest acknowledged write or delete has not reached the store: {@code meta} is the object as
     * reads see it, or null for a delete (the store may still list the key).
     */
    public record Pending(String key, ObjectMeta meta) {
    }

    /**
     * The keys of {@code bucket} under {@code prefix} whose latest write or delete is not in the store yet
     * (pending or failed), in key order: what a listing must show over the store's, or hide from it.
     */
    public List<Pending> pendingIn(String bucket, String prefix) {
        List<Pending> out = new ArrayList<>();
        synchronized (lock) {
            for (Entry e : latestLocal.values()) {
                if (e.key.bucket().equals(bucket) && e.key.key().startsWith(prefix)) {
                    out.add(new Pending(e.key.key(), e.meta()));
                }
            }
        }
        out.sort(java.util.Comparator.comparing(Pending::key));
        return out;
    }

    /**
     * A write (or a delete) still only local that a folder store could not hold beside {@code key}: one whose key
     * is a folder of {@code key} ({@code a} for {@code a/b}) or has {@code key} as a folder ({@code a/b} for
     * {@code a}); a pending delete counts, since the store holds its key until it is made. Null when there is none.
     */
    public ObjectKey localFolderConflict(ObjectKey key) {
        String k = key.key();
        synchronized (lock) {
            for (Entry e : latestLocal.values()) {
                ObjectKey local = e.key;
                if (local.bucket().equals(key.bucket()) && !local.key().equals(k)
                        && (k.startsWith(local.key() + "/") || local.key().startsWith(k + "/"))) {
                    return local;
                }
            }
        }
        return null;
    }

    private Entry localCopy(ObjectKey key) {
        synchronized (lock) {
            return latestLocal.get(key);
        }
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        if (isScratch(key)) {
            return scratch().head(key);
        }
        Entry e = localCopy(key);
        if (e == null) {
            return delegate.head(key);
        }
        if (e.delete) {
            throw ObjectNotFoundException.of(key);
        }
        return e.meta();
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        if (isScratch(request.key())) {
            return scratch().get(request);
        }
        Entry e = localCopy(request.key());
        if (e == null) {
            return delegate.get(request);
        }
        if (e.delete) {
            throw ObjectNotFoundException.of(request.key());
        }
        ObjectMeta meta = e.meta();
        if (request.ifMatch() != null && !request.ifMatch().equals(meta.etag())) {
            throw new StoreException(StoreException.Kind.PRECONDITION_FAILED, 412, "object changed: " + request.key()
                    + " has a newer local write " + meta.etag(), null);
        }
        ByteRange range = request.range() == null ? (e.size == 0 ? null : ByteRange.of(0, e.size)) : request.range().clip(e.size);
        if (request.range() != null && range == null) {
            throw new StoreException(StoreException.Kind.FATAL, 416, "range starts past the end of " + request.key(), null);
        }
        if (range == null) {
            return new ObjectContent(meta, null, InputStream.nullInputStream());
        }
        try {
            return new ObjectContent(meta, range, Uploads.slice(e.data(), range.offset(), range.length()).open());
        } catch (java.nio.file.NoSuchFileException uploaded) {
            // its upload finished between our look and the open, and removed the local copy: the same bytes
            // are in the store now, under the same ETag
            return delegate.get(request);
        }
    }

    /** Stops uploading; pending writes stay journaled and resume when a store opens the directory again. */
    @Override
    public void close() throws IOException {
        closed = true;
        uploaders.shutdownNow();
        super.close();
    }
}
