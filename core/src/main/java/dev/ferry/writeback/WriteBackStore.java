package dev.ferry.writeback;

import dev.ferry.store.ByteRange;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
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
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Write-back in front of an object store: a PUT is acknowledged once its bytes and its journal record are
 * fsync'd on local disk ({@link Durability#LOCAL}), then uploaded in the background; {@link #flush} is the
 * fence that returns when every write acknowledged before it is durable.
 *
 * <ul>
 *   <li><b>Journal</b> ({@link WriteJournal}). Each write is a data file and a journal record (key, size, CRC32C),
 *       both written to a temporary name, fsync'd and renamed, the record last: a record on disk means the write
 *       was acknowledged, and its data is complete. On open, records are replayed and their uploads resume.
 *   <li><b>Uploads</b> ({@link Uploader}): a key's writes reach the store in the order they were acknowledged, other
 *       keys going meanwhile. A transient failure (outage, throttling) is retried with backoff until it succeeds;
 *       a refusal (403, 400, the same error answered again and again), or an upload the store answers with
 *       another size than was acknowledged (it is never called durable), marks the write FAILED, reported by
 *       status and the fence, and kept locally until a later write or delete of its key is durable. An attempt
 *       given up on that may still land is waited out, and the key's newest write checked in the store (and
 *       uploaded again if overtaken), before that write is durable. A disk that cannot take a write fails the PUT
 *       cleanly: nothing half-written is acknowledged.
 *   <li><b>Reads</b> of a key with a write not yet uploaded (or failed) are served from the local copy, and
 *       listings show it ({@link #pendingIn}).
 *   <li><b>Deletes</b> of a key with writes still pending are journaled as writes are, and deleted in the
 *       store after them (so a pending upload never brings a deleted key back); reads see the key gone at
 *       once. A delete of any other key goes to the store directly.
 *   <li><b>Quota.</b> Past {@code quota} pending bytes, writes go through to the store directly, except to
 *       a key with a write still pending, which stays in order behind it.
 * </ul>
 * What is pending, and the fence, are kept by {@link PendingWrites}; uploads are {@link Uploader}'s; here are the
 * writes and the reads over them. Thread-safe.
 */
public final class WriteBackStore extends ForwardingObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(WriteBackStore.class);

    private final WriteBackConfig config;
    private final Clock clock;
    private final WriteJournal journal;
    private final PendingWrites pending;
    private final Uploader uploader;
    private final PeerCopies copies;
    private volatile boolean closed;
    private final LongAdder writeThroughs = new LongAdder();

    public WriteBackStore(ObjectStore upstream, WriteBackConfig config) throws IOException {
        this(upstream, config, Clock.system());
    }

    /** Write-back whose records are stamped, uploads timed and backoffs waited on {@code clock}. */
    public WriteBackStore(ObjectStore upstream, WriteBackConfig config, Clock clock) throws IOException {
        this(upstream, upstream, config, clock);
    }

    /**
     * Write-back over {@code upstream} whose settling writes are checked in {@code storeItself}: the object store with
     * nothing in between that remembers what was written (a cache under write-back would answer a HEAD from memory).
     */
    public WriteBackStore(ObjectStore upstream, ObjectStore storeItself, WriteBackConfig config, Clock clock) throws IOException {
        super(upstream);
        this.config = config;
        this.clock = Objects.requireNonNull(clock, "clock is null");
        this.journal = new WriteJournal(config.dir(), clock);
        WriteJournal.Replay replay = journal.replay();
        List<PendingWrite> replayed = new ArrayList<>();
        for (WriteJournal.Replayed r : replay.writes()) {
            PendingWrite w = new PendingWrite(r.record(), r.etag(), journal.data(r.record().sequence()));
            w.sent = r.sent();
            replayed.add(w);
        }
        this.pending = new PendingWrites(replayed, replay.nextSequence(), clock);
        if (!replayed.isEmpty()) {
            LOG.info("resuming {} pending uploads ({} bytes) from {}", replayed.size(), replayed.stream().mapToLong(w -> w.size).sum(),
                    config.dir());
        }
        this.uploader = new Uploader(upstream, storeItself, journal, pending, config, clock);
        this.copies = new PeerCopies(config.dir().resolve("standby"), config.quota());
        for (PendingWrite w : pending.all()) {
            uploader.submit(w);
        }
    }

    /**
     * An attempt to write {@code key} below ended with no answer and may still land in the store (a
     * {@link dev.ferry.store.chain.RetryingStore} below reports them): the key's newest write is checked in the store
     * once that can no longer happen, before it is durable.
     */
    public void unanswered(ObjectKey key) {
        uploader.unanswered(key);
    }

    /**
     * A PUT: acknowledged when local and journaled (or, past the quota, when written through). The status
     * carries the ETag the object will have in the store: the MD5 of its bytes.
     */
    public WriteStatus write(ObjectKey key, PutBody body) throws IOException {
        return write(key, body, null, null, null);
    }

    /**
     * A PUT that reaches the store only after every write under {@code prefix} (of the key's bucket) acknowledged
     * before it: a checkpoint's metadata, uploaded once its files are there, so that the store never holds the one
     * without the others. Acknowledged as {@link #write} is; past the quota it waits for those writes (at most
     * {@code fenceTimeout}, else 503 and nothing written) and then goes through.
     */
    public WriteStatus writeAfter(ObjectKey key, PutBody body, String prefix, Duration fenceTimeout) throws IOException {
        Objects.requireNonNull(prefix, "prefix is null");
        return write(key, body, null, null, new After(prefix, fenceTimeout));
    }

    /**
     * Tells {@code listener} of each write that becomes durable from now on, with its sequence and key (on an
     * uploader's thread: it must not block). Earlier writes of the key that it replaced are not told apart.
     */
    public void onDurable(java.util.function.Consumer<WriteStatus> listener) {
        pending.onDurable(listener);
    }

    /** The bytes that may wait for upload at once; a write past them goes through. */
    public long quota() {
        return config.quota();
    }

    /** The journal's identity: the same for as long as its folder lives (a node that lost its disk has another). */
    public String journalId() {
        return journal.id();
    }

    /**
     * A write of this node still only on its disk, as a peer's copy of it is made: its bytes' file, size, CRC32C and
     * the record's ETag, part sizes, attributes and barrier. Null once it is durable or replaced (nothing to copy).
     */
    public LocalCopy localCopy(long sequence) {
        PendingWrite w = pending.entry(sequence);
        if (w == null || w.delete || w.durability == Durability.DURABLE) {
            return null;
        }
        WriteRecord r = w.record;
        return new LocalCopy(r.sequence(), r.key(), w.data, r.size(), r.crc(), r.etag(), r.partSizes(), r.attributes(), r.after(),
                r.written());
    }

    /** A pending write's local bytes and what a peer's copy of it records; see {@link #localCopy}. */
    public record LocalCopy(long sequence, ObjectKey key, java.nio.file.Path data, long size, int crc32c, String etag, List<Long> partSizes,
            dev.ferry.store.ObjectAttributes attributes, String after, java.time.Instant written) {
    }

    /**
     * Keeps another daemon's write as its peer: {@code copy}'s bytes are {@code body} (a spooled body is moved in),
     * fsync'd here before this returns; kept until {@link #releaseCopies} or {@link #adoptCopies}, stamped with the
     * time the origin wrote it ({@code copy.written()}, null: now). 400 when the bytes are not those the origin
     * described, 507 when the disk cannot take them or the copies kept would pass this node's write-back quota.
     */
    public void keepCopy(String originId, String originUrl, LocalCopy copy, PutBody body) throws IOException {
        WriteRecord record = new WriteRecord(copy.sequence(), copy.key(), copy.size(), copy.crc32c(),
                copy.written() != null ? copy.written() : clock.now(), copy.etag(), copy.partSizes(), copy.attributes(), false, copy.after());
        copies.keep(originId, originUrl, record, body);
    }

    /** Lets go of the copies of {@code key} up to {@code sequence} kept for {@code originId}: it made them durable. */
    public void releaseCopies(String originId, ObjectKey key, long sequence) throws IOException {
        copies.release(originId, key, sequence);
    }

    /** The daemons whose writes this node keeps copies of: journal id to URL. */
    public java.util.Map<String, String> copyOrigins() throws IOException {
        return copies.origins();
    }

    /** How many copies of other daemons' writes are kept here, and their bytes. */
    public long[] copiesHeld() throws IOException {
        return copies.held();
    }

    /**
     * Makes {@code originId}'s copies this node's own pending writes, in the order the origin wrote them, and uploads
     * them (the origin is gone with its disk); returns how many.
     */
    public int adoptCopies(String originId) throws IOException {
        return copies.adopt(originId, this);
    }

    /**
     * A copy adopted: journaled as this node's write, with the origin's ETag, parts and barrier; false (nothing
     * written) when the store holds it already or holds a write of the key newer than the copy (by the origin's
     * clock): the origin's upload landed, or a later writer's did, which the copy must not overtake.
     */
    boolean adopt(WriteRecord copy, PutBody body) throws IOException {
        ObjectMeta stored = storedMeta(copy.key());
        if (stored != null && (java.util.Objects.equals(stored.etag(), copy.etag())
                || (stored.lastModified() != null && stored.lastModified().isAfter(copy.written())))) {
            LOG.info("the copy of {} (written {}) is not adopted: the store holds {} of {}", copy.key(), copy.written(),
                    stored.etag(), stored.lastModified());
            return false;
        }
        write(copy.key(), body, copy.partSizes(), copy.etag(), copy.after() == null ? null : new After(copy.after(), Duration.ofMinutes(10)));
        return true;
    }

    /** The store's metadata of {@code key}, or null when it holds none. */
    private ObjectMeta storedMeta(ObjectKey key) throws IOException {
        try {
            return delegate.head(key);
        } catch (dev.ferry.store.ObjectNotFoundException e) {
            return null;
        } catch (StoreException e) {
            if (e.kind() == StoreException.Kind.NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }

    /**
     * Lets go of the copies kept for {@code originId} that the store already holds (same ETag): their release never
     * came. Returns how many went. Asks the store once per copy.
     */
    public int sweepCopies(String originId) throws IOException {
        return copies.sweep(originId, r -> {
            try {
                ObjectMeta stored = storedMeta(r.key());
                return stored != null && java.util.Objects.equals(stored.etag(), r.etag());
            } catch (IOException e) {
                return false;
            }
        });
    }

    /**
     * Holds the uploads of {@code key} until {@link #resumeUploads}: a write being copied to a peer is not uploaded
     * meanwhile (the two would share the node's disk and CPU; the store gets it once the copy is made). Held in
     * memory only: a restart uploads everything. Calls nest.
     */
    public void holdUploads(ObjectKey key) {
        pending.hold(key, +1);
    }

    /** Ends one {@link #holdUploads} of {@code key}. */
    public void resumeUploads(ObjectKey key) {
        pending.hold(key, -1);
    }

    /** A barrier a write waits behind: the prefix, and how long a write through may wait for it. */
    private record After(String prefix, Duration fenceTimeout) {
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
        return write(key, body, List.copyOf(partSizes), etag, null);
    }

    private WriteStatus write(ObjectKey key, PutBody body, List<Long> partSizes, String etag, After after) throws IOException {
        if (closed) {
            throw new IOException("write-back store is closed");
        }
        long sequence = pending.reserve(key, body.length(), config.quota());
        if (sequence >= 0) {
            return writeLocal(key, body, sequence, partSizes, etag, after == null ? null : after.prefix());
        }
        if (after != null) {
            FlushResult fence = flush(k -> k.bucket().equals(key.bucket()) && k.key().startsWith(after.prefix())
                    && !k.equals(key), after.fenceTimeout());
            if (!fence.complete() || fence.firstError() != null) {
                throw new StoreException(StoreException.Kind.RETRYABLE, 503, "ServiceUnavailable", "write-back's quota is full and "
                        + "the writes under " + after.prefix() + " that " + key + " must follow are not in the store yet: "
                        + (fence.firstError() != null ? fence.firstError() : "the fence timed out") + "; nothing was written", null);
            }
        }
        writeThroughs.increment();
        if (writeThroughs.sum() == 1 || writeThroughs.sum() % 100 == 0) {
            LOG.warn("write-back quota of {} bytes is full; writing {} through to the object store", config.quota(), key);
        }
        ObjectMeta meta = partSizes == null ? delegate.put(key, body)
                : Uploads.putParts(delegate, key, body.file(), partSizes, body.attributes(), 4);
        return new WriteStatus(-1, key, meta.size(), Durability.DURABLE, null, meta.etag());
    }

    /** Journals the write (its reservation released if the disk refuses it) and queues it for upload. */
    private WriteStatus writeLocal(ObjectKey key, PutBody body, long sequence, List<Long> partSizes, String givenEtag, String after)
            throws IOException {
        WriteRecord record;
        try {
            record = journal.write(sequence, key, body, partSizes, givenEtag, after);
        } catch (StoreException failure) {
            pending.release(body.length());
            throw failure;
        }
        PendingWrite w = new PendingWrite(record, record.etag(), journal.data(sequence));
        enqueue(w);
        return w.status();
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        WriteStatus s = write(key, body);
        return new ObjectMeta(key, s.size(), s.etag(), null, clock.now(), body.attributes());
    }

    /** Makes a journaled write (or delete) pending: the latest of its key, queued behind its key's earlier ones for upload. */
    private void enqueue(PendingWrite w) {
        pending.add(w);
        uploader.submit(w);
    }

    /**
     * The fence: waits until every write acknowledged before this call is durable or has failed for good,
     * at most {@code timeout} (null: no limit). Complete when none failed.
     */
    public FlushResult flush(Duration timeout) throws InterruptedIOException {
        return flush(key -> true, timeout);
    }

    /** The fence over the writes (and deletes) of the keys {@code which} accepts. */
    public FlushResult flush(Predicate<ObjectKey> which, Duration timeout) throws InterruptedIOException {
        return pending.flush(which, timeout);
    }

    /** Fences waiting now for writes still only local: flushes, and writes that wait for an earlier one to reach the store. */
    public int fencesWaiting() {
        return pending.fencesWaiting();
    }

    /**
     * A DELETE. With a write of {@code key} still pending (or failed), the delete is journaled and queued
     * behind it (fsync'd: acknowledged as a write is), and reads see the key gone at once; otherwise it goes
     * to the store now.
     */
    @Override
    public void delete(ObjectKey key) throws IOException {
        if (closed) {
            throw new IOException("write-back store is closed");
        }
        long sequence = pending.reserveDelete(key);
        if (sequence == 0) {
            return; // already deleted, waiting to reach the store
        }
        if (sequence < 0) {
            delegate.delete(key);
            return;
        }
        WriteRecord deletion = WriteRecord.deletion(sequence, key, clock.now());
        journal.delete(deletion);
        enqueue(new PendingWrite(deletion, null, journal.data(sequence)));
    }

    public WriteBackStats stats() {
        return pending.stats(uploader.uploadedBytes(), uploader.uploadSeconds(), writeThroughs.sum(), uploader.repaired());
    }

    // ---- reads see the writes --------------------------------------------------------------------------

    /** True when reads of {@code key} are served here (a write not yet uploaded, or failed), not upstream. */
    public boolean holdsLocally(ObjectKey key) {
        return pending.latest(key) != null;
    }

    /** True when a write to {@code bucket} is still only local (its bucket looks empty upstream, but is not). */
    public boolean holdsLocallyIn(String bucket) {
        return pending.anyIn(bucket, false);
    }

    /** True when the latest of {@code key} is a delete waiting behind pending writes (the store still holds the key). */
    public boolean deletePending(ObjectKey key) {
        PendingWrite e = pending.latest(key);
        return e != null && e.delete;
    }

    /** True when a delete in {@code bucket} waits behind pending writes (its store still holds the key). */
    public boolean deletesPendingIn(String bucket) {
        return pending.anyIn(bucket, true);
    }

    /**
     * The keys of {@code bucket} under {@code prefix} whose latest write or delete is not in the store yet
     * (pending or failed), in key order: what a listing must show over the store's, or hide from it.
     */
    public List<PendingKey> pendingIn(String bucket, String prefix) {
        List<PendingKey> out = new ArrayList<>();
        for (PendingWrite w : pending.latestIn(bucket, prefix)) {
            out.add(new PendingKey(w.key.key(), w.meta()));
        }
        out.sort(Comparator.comparing(PendingKey::key));
        return out;
    }

    /**
     * A write (or a delete) still only local that a folder store could not hold beside {@code key}: one whose key
     * is a folder of {@code key} ({@code a} for {@code a/b}) or has {@code key} as a folder ({@code a/b} for
     * {@code a}); a pending delete counts, since the store holds its key until it is made. Null when there is none.
     */
    public ObjectKey localFolderConflict(ObjectKey key) {
        return pending.folderConflict(key);
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        PendingWrite e = pending.latest(key);
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
        PendingWrite e = pending.latest(request.key());
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
            return new ObjectContent(meta, range, Uploads.slice(e.data, range.offset(), range.length()).open());
        } catch (NoSuchFileException uploaded) {
            // its upload finished between our look and the open, and removed the local copy: the same bytes
            // are in the store now, under the same ETag
            return delegate.get(request);
        }
    }

    /** Stops uploading; pending writes stay journaled and resume when a store opens the directory again. */
    @Override
    public void close() throws IOException {
        closed = true;
        uploader.close();
        super.close();
    }
}
