package dev.ferry.writeback;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import dev.ferry.store.chain.FirstByteTimeoutStore;
import dev.ferry.store.chain.RetryingStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Write-back's upload engine: makes the writes and deletes it is given ({@link #submit}) durable in the store below,
 * on {@code uploaders} threads.
 *
 * <ul>
 *   <li><b>Order per key.</b> Each key has a queue: its writes go up one after another, in the order acknowledged,
 *       while other keys go meanwhile. A key that backs off or fails holds back no other key.
 *   <li><b>Retries.</b> A failed upload is retried with exponential backoff and jitter (50 ms doubling to
 *       {@code maxBackoff}): while the store gives no answer or throttles, until it succeeds. A refusal the store
 *       answers as final (400, 403) fails the write at once; any other error it answers again and again (a 500
 *       for one key) reports it failed after {@code maxRefusals} tries, and it is then tried once a minute while no
 *       newer write of its key waits. A failed write stays local, served and reported, and holds back no other write.
 *       One log line when a write begins to fail, one when it is reported failed.
 *   <li><b>Late attempts.</b> An attempt that ended without an answer ({@link StoreException#mayHaveApplied}:
 *       a timeout, a reset, a 500) may still land in the store later, over a newer write or after a delete. Its key
 *       is then in doubt for {@code settleWindow}; the key's newest write, once uploaded, is
 *       {@link Durability#SETTLING} until the window has passed, when a HEAD checks that the store holds it (or, for
 *       a delete, nothing), uploads it again if it does not, and only then calls it durable. Fences wait meanwhile.
 * </ul>
 * Thread-safe: one lock guards the queues; uploads and checks run outside it.
 */
final class Uploader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Uploader.class);
    private static final long FIRST_BACKOFF_MS = 50;
    /** How often a write reported failed after repeated refusals is tried again. */
    private static final java.time.Duration RETRY_REPORTED = java.time.Duration.ofMinutes(1);
    /** Longest nap of an idle worker before it looks at a key whose time has not come yet. */
    private static final long NAP_NANOS = 20_000_000L;
    /** How often a write behind a barrier looks again whether the writes before it are in the store. */
    private static final long BARRIER_NANOS = 50_000_000L;

    private final ObjectStore store;
    private final ObjectStore checks;
    private final WriteJournal journal;
    private final PendingWrites ledger;
    private final WriteBackConfig config;
    private final Clock clock;
    private final Object lock = new Object();
    private final Map<ObjectKey, KeyQueue> queues = new HashMap<>();
    private final PriorityQueue<KeyQueue> ready = new PriorityQueue<>(Comparator.comparingLong(q -> q.readyAt));
    private final ExecutorService workers;
    private volatile boolean closed;
    private final LongAdder uploadedBytes = new LongAdder();
    private final LongAdder uploadNanos = new LongAdder();
    private final LongAdder repaired = new LongAdder();

    /** The writes of one key not yet durable, in order, and where the key stands. Guarded by the lock. */
    private static final class KeyQueue {
        final ObjectKey key;
        final ArrayDeque<PendingWrite> writes = new ArrayDeque<>();
        /** When the head may be tried (or checked) next, on the clock's nanoseconds. */
        long readyAt;
        boolean scheduled;
        boolean running;
        /** An attempt at this key that may still land was given up on; it cannot land after {@code doubtUntil}. */
        boolean inDoubt;
        long doubtUntil;
        /** The head is in the store, settling: checked at {@code readyAt}. */
        boolean headUploaded;
        /** The ETag the store answered the head's upload with. */
        String storedEtag;
        int refusals;
        long backoffMs = FIRST_BACKOFF_MS;

        KeyQueue(ObjectKey key) {
            this.key = key;
        }

        void headChanged() {
            headUploaded = false;
            storedEtag = null;
            refusals = 0;
            backoffMs = FIRST_BACKOFF_MS;
        }
    }

    /**
     * @param store   where writes go
     * @param checks  where a settling write is checked: the store itself, past any cache's memory of what was written
     * @param journal the writes' files, dropped once durable
     * @param ledger  told of each write's progress
     */
    Uploader(ObjectStore store, ObjectStore checks, WriteJournal journal, PendingWrites ledger, WriteBackConfig config, Clock clock) {
        this.store = Objects.requireNonNull(store, "store is null");
        this.checks = Objects.requireNonNull(checks, "checks is null");
        this.journal = journal;
        this.ledger = ledger;
        this.config = config;
        this.clock = clock;
        AtomicInteger threads = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(config.uploaders(), r -> {
            Thread t = new Thread(r, "ferry-writeback-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        for (int i = 0; i < config.uploaders(); i++) {
            workers.submit(this::work);
        }
    }

    /** Queues {@code w} behind the writes of its key not yet durable. */
    void submit(PendingWrite w) {
        synchronized (lock) {
            KeyQueue q = queues.computeIfAbsent(w.key, KeyQueue::new);
            q.writes.add(w);
            if (w.sent) {
                doubt(q); // replayed after a restart, and an upload of it may have been in flight when the process ended
            }
            boolean headWaits = q.headUploaded || q.writes.peek().durability == Durability.FAILED;
            if (!q.running && (!q.scheduled || headWaits)) {
                schedule(q, clock.nanoTime()); // a settling or failed head is overwritten by w: w goes now
            }
        }
    }

    /**
     * An attempt to write {@code key} ended with no answer and may still land: the key's newest write is checked in the
     * store once {@code settleWindow} has passed. Keys with nothing queued here are not write-back's.
     */
    void unanswered(ObjectKey key) {
        synchronized (lock) {
            KeyQueue q = queues.get(key);
            if (q != null) {
                doubt(q);
            }
        }
    }

    /** Under the lock. */
    private void doubt(KeyQueue q) {
        long until = clock.nanoTime() + config.settleWindow().toNanos();
        q.doubtUntil = q.inDoubt ? Math.max(q.doubtUntil, until) : until;
        q.inDoubt = true;
        if (q.scheduled && q.headUploaded && q.readyAt < q.doubtUntil) {
            schedule(q, q.doubtUntil);
        }
    }

    /** (Re)schedules {@code q} at {@code at}, unless a worker has it (it decides when it is done). Under the lock. */
    private void schedule(KeyQueue q, long at) {
        if (q.running) {
            return;
        }
        if (q.scheduled) {
            ready.remove(q);
        }
        q.readyAt = at;
        q.scheduled = true;
        ready.add(q);
        lock.notifyAll();
    }

    /** A worker is done with {@code q}: runs it again at {@code at}, or, with nothing queued, forgets it. Under the lock. */
    private void release(KeyQueue q, long at) {
        q.running = false;
        if (!q.writes.isEmpty()) {
            schedule(q, at);
        } else if (!q.inDoubt || q.doubtUntil <= clock.nanoTime()) {
            queues.remove(q.key);
        }
    }

    private void work() {
        while (!closed) {
            KeyQueue q = null;
            long nap = 0;
            synchronized (lock) {
                KeyQueue first = ready.peek();
                if (first == null) {
                    try {
                        lock.wait(100);
                    } catch (InterruptedException e) {
                        return;
                    }
                    continue;
                }
                long wait = first.readyAt - clock.nanoTime();
                if (wait > 0) {
                    nap = Math.min(wait, NAP_NANOS);
                } else {
                    q = ready.poll();
                    q.scheduled = false;
                    q.running = true;
                }
            }
            if (q == null) {
                try {
                    clock.sleepNanos(nap); // the clock's own wait, so that tests on a manual clock never wait
                } catch (InterruptedException e) {
                    return;
                }
                continue;
            }
            try {
                step(q);
            } catch (RuntimeException e) {
                LOG.error("write-back's upload of {} met an unexpected error; it is tried again", q.key, e);
                synchronized (lock) {
                    release(q, clock.nanoTime() + config.maxBackoff().toNanos());
                }
            }
        }
    }

    /** One step of key {@code q}: its head uploaded, or checked once settled. Ends with {@link #release}. */
    private void step(KeyQueue q) {
        PendingWrite w;
        boolean check;
        synchronized (lock) {
            if (q.headUploaded && q.writes.size() > 1) {
                q.writes.poll(); // settling, and overwritten by a newer write: that one is checked instead, and replaces it
                q.headChanged();
            }
            while (q.writes.size() > 1 && q.writes.peek().durability == Durability.FAILED) {
                q.writes.poll(); // reported failed and still retried: a newer write of its key goes instead, and replaces it
                q.headChanged();
            }
            w = q.writes.peek();
            check = q.headUploaded;
            if (w == null) {
                release(q, 0);
                return;
            }
        }
        if (check) {
            check(q, w);
        } else {
            upload(q, w);
        }
    }

    private void upload(KeyQueue q, PendingWrite w) {
        if (ledger.waits(w)) { // held while a peer copies it, or written after others under its prefix still local
            synchronized (lock) {
                release(q, clock.nanoTime() + BARRIER_NANOS);
            }
            return;
        }
        if (!w.sent) {
            journal.markSent(w.sequence);
            w.sent = true;
        }
        long t0 = clock.nanoTime();
        String etag;
        try {
            etag = StoreUpload.send(store, w, config.partSize());
        } catch (IOException failure) {
            failed(q, w, failure);
            return;
        }
        uploadNanos.add(clock.nanoTime() - t0);
        uploadedBytes.add(w.size);
        boolean settle;
        synchronized (lock) {
            q.headChanged();
            q.storedEtag = etag;
            settle = q.inDoubt;
            if (settle) {
                q.headUploaded = true;
            }
        }
        if (!settle) {
            durable(q, w);
            return;
        }
        ledger.settling(w);
        synchronized (lock) {
            release(q, Math.max(clock.nanoTime(), q.doubtUntil));
        }
    }

    /**
     * The settled check: the store must hold what {@code w} wrote (a delete: nothing). If it does, {@code w} is
     * durable; if not, a late attempt overtook it, and it is uploaded again.
     */
    private void check(KeyQueue q, PendingWrite w) {
        boolean holds;
        String found;
        try {
            ObjectMeta meta = checks.head(w.key);
            holds = !w.delete && meta.size() == w.size && Objects.equals(meta.etag(), q.storedEtag);
            found = meta.size() + " bytes, ETag " + meta.etag();
        } catch (ObjectNotFoundException gone) {
            holds = w.delete;
            found = "nothing";
        } catch (IOException failure) {
            LOG.debug("checking {} in the store failed ({}); trying again", w.key, failure.getMessage());
            synchronized (lock) {
                release(q, backoff(q));
            }
            return;
        }
        synchronized (lock) {
            if (q.inDoubt && q.doubtUntil > clock.nanoTime()) {
                release(q, q.doubtUntil); // another attempt was given up on meanwhile: wait that one out too
                return;
            }
            if (holds) {
                q.inDoubt = false;
            } else {
                q.headChanged();
            }
        }
        if (holds) {
            durable(q, w);
            return;
        }
        repaired.increment();
        LOG.warn("the object store holds {} at {}, not the newest acknowledged {}: an upload attempt given up on landed after it;"
                + " uploading it again", found, w.key, w.delete ? "delete" : "write (" + w.size + " bytes, ETag " + w.etag + ")");
        ledger.local(w, null);
        synchronized (lock) {
            release(q, clock.nanoTime());
        }
    }

    /** {@code w} is in the store for good: its files go, the ledger is told, and its key's next write goes next. */
    private void durable(KeyQueue q, PendingWrite w) {
        removeQuietly(w, journal::dropRecord); // first: a restart no longer uploads it
        List<PendingWrite> replaced = ledger.uploaded(w);
        removeQuietly(w, journal::dropData); // a reader that still holds the entry falls back to upstream
        for (PendingWrite old : replaced) {
            if (old.error != null) {
                LOG.info("the failed write {} of {} is replaced by a later one, now durable", old.sequence, old.key);
            }
        }
        dropFiles(replaced);
        ledger.durable(w);
        synchronized (lock) {
            q.writes.poll();
            q.headChanged();
            release(q, clock.nanoTime());
        }
    }

    /**
     * An upload of {@code w} failed. A final refusal (400, 403, another size stored) fails it for good. An error the
     * store answered {@code maxRefusals} times in a row reports it failed, and it is tried again every
     * {@link #RETRY_REPORTED} while no newer write of its key waits: a store that recovers still gets it. Anything
     * else is retried after a backoff.
     */
    private void failed(KeyQueue q, PendingWrite w, IOException failure) {
        if (closed) {
            return; // interrupted by close: the write stays journaled and pending, for the next open to upload
        }
        boolean mayLand = failure instanceof FirstByteTimeoutStore.Abandoned abandoned
                ? !abandoned.callEnded() // where it ran, the attempt reported itself if it may land; unknown if it has not ended
                : StoreException.mayHaveApplied(failure);
        StoreException.Kind kind = StoreException.classify(failure);
        int status = failure instanceof StoreException se ? se.httpStatus() : 0;
        boolean answered = status >= 400 && kind != StoreException.Kind.THROTTLED;
        String message = failure.getMessage();
        boolean wasReported = w.durability == Durability.FAILED;
        boolean first;
        boolean reported;
        synchronized (lock) {
            if (mayLand) {
                doubt(q);
            }
            first = q.refusals == 0 && q.backoffMs == FIRST_BACKOFF_MS;
            if (answered) {
                // the chain below retries too: each of its attempts was a refusal
                q.refusals += failure instanceof RetryingStore.Exhausted exhausted ? exhausted.attempts() : 1;
            }
            reported = !kind.retryable() || wasReported || answered && q.refusals >= config.maxRefusals();
        }
        if (!kind.retryable()) {
            dropFiles(ledger.failed(w, message));
            LOG.error("the upload of {} failed for good ({}); it stays on local disk{}, served, and reported until a later write or"
                    + " delete of its key replaces it", w.key, message, w.delete ? " (a delete)" : " at " + w.data);
            synchronized (lock) {
                q.writes.poll();
                q.headChanged();
                release(q, clock.nanoTime());
            }
            return;
        }
        if (reported) {
            dropFiles(ledger.failed(w, message));
            if (!wasReported) {
                LOG.error("the upload of {} failed {} times ({}); it is reported failed, stays on local disk{} and is served, and is tried"
                        + " again every {} s until it succeeds or a later write or delete of its key replaces it", w.key, q.refusals, message,
                        w.delete ? " (a delete)" : " at " + w.data, RETRY_REPORTED.toSeconds());
            }
            synchronized (lock) {
                release(q, clock.nanoTime() + RETRY_REPORTED.toNanos());
            }
            return;
        }
        ledger.local(w, message);
        if (first) {
            LOG.warn("the upload of {} failed ({}); retrying with backoff up to {} ms", w.key, message, config.maxBackoff().toMillis());
        } else {
            LOG.debug("the upload of {} failed again ({})", w.key, message);
        }
        synchronized (lock) {
            release(q, backoff(q));
        }
    }

    /** Removes the journal files of writes replaced without reaching the store themselves. */
    private void dropFiles(List<PendingWrite> replaced) {
        for (PendingWrite old : replaced) {
            removeQuietly(old, journal::dropRecord);
            removeQuietly(old, journal::dropData);
        }
    }

    /** A journal file of a write that needs removing. */
    @FunctionalInterface
    private interface Removal {
        void remove(long sequence) throws IOException;
    }

    /**
     * Removes one of {@code w}'s files; a disk that refuses is logged and the write's progress goes on (a record left
     * behind is uploaded again, the same bytes, after a restart; data left behind is deleted then).
     */
    private void removeQuietly(PendingWrite w, Removal removal) {
        try {
            removal.remove(w.sequence);
        } catch (IOException e) {
            LOG.warn("a local file of write {} of {} could not be removed ({})", w.sequence, w.key, e.getMessage());
        }
    }

    /** When the head of {@code q} is tried next: a jittered backoff, doubling up to {@code maxBackoff}. Under the lock. */
    private long backoff(KeyQueue q) {
        long wait = ThreadLocalRandom.current().nextLong(q.backoffMs / 2, q.backoffMs + 1);
        q.backoffMs = Math.min(config.maxBackoff().toMillis(), q.backoffMs * 2);
        return clock.nanoTime() + wait * 1_000_000L;
    }

    long uploadedBytes() {
        return uploadedBytes.sum();
    }

    double uploadSeconds() {
        return uploadNanos.sum() / 1e9;
    }

    /** Late attempts found in the store over a newer write (or after a delete), and repaired. */
    long repaired() {
        return repaired.sum();
    }

    /** Stops uploading; what is queued stays journaled. */
    @Override
    public void close() {
        closed = true;
        workers.shutdownNow();
    }
}
