package dev.ferry.writeback;

import dev.ferry.store.ObjectKey;
import dev.ferry.time.Clock;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Write-back's ledger: the writes and deletes acknowledged and not yet durable, by sequence and the latest of each
 * key, and the bytes they hold against the quota. Uploads report here ({@link #uploaded}, {@link #durable},
 * {@link #failed}); the fence ({@link #flush}) waits here; reads and listings ask here what is only local.
 *
 * <p>Thread-safe: one lock guards the maps, the counts and each write's state; a fence waits on it.
 */
final class PendingWrites {
    private final Clock clock;
    private final Object lock = new Object();
    private final TreeMap<Long, PendingWrite> entries = new TreeMap<>();
    private final Map<ObjectKey, PendingWrite> latest = new HashMap<>();
    private long nextSequence;
    private long pendingBytes;
    private int fencesWaiting; // under lock
    /** Told of each write that became durable, outside the lock. */
    private volatile java.util.function.Consumer<WriteStatus> onDurable = s -> { };

    /** The ledger after an open: {@code replayed} pending again, the next write numbered {@code nextSequence}. */
    PendingWrites(List<PendingWrite> replayed, long nextSequence, Clock clock) {
        this.clock = clock;
        for (PendingWrite w : replayed) {
            entries.put(w.sequence, w);
            latest.merge(w.key, w, (a, b) -> a.sequence > b.sequence ? a : b);
            pendingBytes += w.size;
        }
        this.nextSequence = nextSequence;
    }

    /** The pending write (or delete) {@code sequence}, or null when it is not pending any more. */
    PendingWrite entry(long sequence) {
        synchronized (lock) {
            return entries.get(sequence);
        }
    }

    /** Every pending write, in sequence order. */
    List<PendingWrite> all() {
        synchronized (lock) {
            return List.copyOf(entries.values());
        }
    }

    /**
     * A sequence number for a write of {@code length} bytes of {@code key}, the bytes reserved against {@code quota};
     * -1 when they would exceed it and no earlier write of the key is pending: the write then goes through to the
     * store. An earlier write of the key still pending keeps it in order behind that one, past the quota if need be
     * (going through, it would land first and be overwritten by the older write).
     */
    long reserve(ObjectKey key, long length, long quota) {
        synchronized (lock) {
            if (pendingBytes + length > quota && !latest.containsKey(key)) {
                return -1;
            }
            pendingBytes += length; // released if the local write fails
            return nextSequence++;
        }
    }

    /** Gives back the bytes reserved for a write that failed before it was acknowledged. */
    void release(long length) {
        synchronized (lock) {
            pendingBytes -= length;
        }
    }

    /**
     * A sequence number for a delete of {@code key} to journal behind its pending writes; -1 when none is pending (the
     * delete goes to the store now), 0 when the latest is a delete already (there is nothing to do).
     */
    long reserveDelete(ObjectKey key) {
        synchronized (lock) {
            PendingWrite w = latest.get(key);
            if (w == null) {
                return -1;
            }
            return w.delete ? 0 : nextSequence++;
        }
    }

    /** Makes a journaled write (or delete) pending: the latest of its key. */
    void add(PendingWrite w) {
        synchronized (lock) {
            entries.put(w.sequence, w);
            latest.put(w.key, w);
        }
    }

    /**
     * {@code w} is in the store: it leaves the pending writes together with the earlier failed (or settling: uploaded,
     * then overwritten by {@code w}) writes of its key it replaces (a fence taken in between would otherwise find a failed write whose replacement is already gone, and
     * say incomplete). Those are marked superseded and returned, for their files to go. {@link #durable} follows once
     * the files of {@code w} are gone.
     */
    List<PendingWrite> uploaded(PendingWrite w) {
        synchronized (lock) {
            drop(w);
            return supersedeEarlier(w, Set.of(Durability.FAILED, Durability.SETTLING));
        }
    }

    /**
     * Takes out the writes of {@code w}'s key acknowledged before it whose durability is one of {@code states}, marks
     * them superseded and returns them (for their files to go). Call under {@code lock}.
     */
    private List<PendingWrite> supersedeEarlier(PendingWrite w, Set<Durability> states) {
        List<PendingWrite> replaced = new ArrayList<>();
        for (PendingWrite earlier : entries.headMap(w.sequence).values()) {
            if (earlier.key.equals(w.key) && states.contains(earlier.durability)) {
                replaced.add(earlier);
            }
        }
        for (PendingWrite old : replaced) {
            drop(old);
            old.durability = Durability.SUPERSEDED;
        }
        return replaced;
    }

    /** {@code w} is durable and its local files are gone: a fence waiting on it may return (only now: it leaves nothing behind). */
    void durable(PendingWrite w) {
        synchronized (lock) {
            w.durability = Durability.DURABLE;
            lock.notifyAll();
        }
        try {
            onDurable.accept(w.status());
        } catch (RuntimeException e) { // a listener's failure must not stop the key's next upload
            org.slf4j.LoggerFactory.getLogger(PendingWrites.class).warn("a listener of durable writes failed on {}: {}", w.key, e.toString());
        }
    }

    /** Tells {@code listener} of each write that becomes durable from now on (on an uploader's thread: it must not block). */
    void onDurable(java.util.function.Consumer<WriteStatus> listener) {
        onDurable = java.util.Objects.requireNonNull(listener, "listener is null");
    }

    /** {@code w} is uploaded and waits for an abandoned attempt at its key to be past landing: {@link Durability#SETTLING}. */
    void settling(PendingWrite w) {
        synchronized (lock) {
            w.durability = Durability.SETTLING;
            w.error = null;
        }
    }

    /**
     * {@code w} is being uploaded (again) or retried: LOCAL, with the reason its last attempt failed ({@code retrying},
     * null when none did), which status and the fence show while it is retried.
     */
    void local(PendingWrite w, String retrying) {
        synchronized (lock) {
            w.durability = Durability.LOCAL;
            w.error = retrying;
        }
    }

    /**
     * {@code w} failed for good: reported by status and the fence, kept locally until a later write of its key is
     * durable. Earlier writes of its key that were uploaded and are settling are owed nothing more (the newest
     * acknowledged state is {@code w}'s, reported failed): they are marked superseded and returned, for their files to go.
     */
    List<PendingWrite> failed(PendingWrite w, String error) {
        synchronized (lock) {
            w.error = error;
            w.durability = Durability.FAILED;
            List<PendingWrite> replaced = supersedeEarlier(w, Set.of(Durability.SETTLING));
            lock.notifyAll();
            return replaced;
        }
    }

    /** Takes {@code w} out of the pending writes, once. Call under {@code lock}. */
    private void drop(PendingWrite w) {
        if (!w.dropped) {
            w.dropped = true;
            entries.remove(w.sequence);
            pendingBytes -= w.size;
            if (latest.get(w.key) == w) {
                latest.remove(w.key);
            }
        }
    }

    /**
     * The fence over the writes (and deletes) of the keys {@code which} accepts: waits until every one acknowledged
     * before this call is durable or has failed for good, at most {@code timeout} (null: no limit). Complete when
     * none failed.
     */
    FlushResult flush(Predicate<ObjectKey> which, Duration timeout) throws InterruptedIOException {
        long deadline = timeout == null ? Long.MAX_VALUE : clock.nanoTime() + timeout.toNanos();
        List<PendingWrite> fence;
        synchronized (lock) {
            fence = entries.values().stream().filter(w -> which.test(w.key)).toList();
        }
        synchronized (lock) {
            fencesWaiting++;
            try {
                while (true) {
                    boolean done = fence.stream().allMatch(w -> w.durability != Durability.LOCAL && w.durability != Durability.SETTLING);
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
            } finally {
                fencesWaiting--;
            }
        }
        List<WriteStatus> statuses = fence.stream().map(PendingWrite::status).toList();
        String firstError = statuses.stream().filter(s -> s.durability() == Durability.FAILED).map(s -> s.key() + ": " + s.error())
                .findFirst().orElse(null);
        boolean complete = statuses.stream().allMatch(s -> s.durability() == Durability.DURABLE || s.durability() == Durability.SUPERSEDED);
        return new FlushResult(complete, statuses, firstError);
    }

    /** Fences ({@link #flush}) waiting now for writes still only local. */
    int fencesWaiting() {
        synchronized (lock) {
            return fencesWaiting;
        }
    }

    /** The pending and failed writes now, with the counts of what went up (and through) so far. */
    WriteBackStats stats(long uploadedBytes, double uploadSeconds, long writeThroughs, long repaired) {
        synchronized (lock) {
            double oldest = entries.values().stream().filter(w -> w.durability == Durability.LOCAL).map(w -> w.written)
                    .min(Instant::compareTo).map(t -> Duration.between(t, clock.now()).toMillis() / 1000.0).orElse(0.0);
            long pending = entries.values().stream().filter(w -> w.durability == Durability.LOCAL).count();
            long settling = entries.values().stream().filter(w -> w.durability == Durability.SETTLING).count();
            List<PendingWrite> retrying = entries.values().stream().filter(w -> w.durability == Durability.LOCAL && w.error != null).toList();
            List<PendingWrite> failed = entries.values().stream().filter(w -> w.durability == Durability.FAILED).toList();
            return new WriteBackStats(pendingBytes, pending, oldest, uploadedBytes, uploadSeconds, writeThroughs, failed.size(),
                    failed.isEmpty() ? null : failed.getFirst().key + ": " + failed.getFirst().error, settling, repaired, retrying.size(),
                    retrying.isEmpty() ? null : retrying.getFirst().key + ": " + retrying.getFirst().error);
        }
    }

    /** The latest write or delete of {@code key} not yet in the store (pending or failed), or null. */
    PendingWrite latest(ObjectKey key) {
        synchronized (lock) {
            return latest.get(key);
        }
    }

    /** True when the latest write of some key of {@code bucket} is not in the store yet ({@code deletes}: a delete). */
    boolean anyIn(String bucket, boolean deletes) {
        synchronized (lock) {
            return latest.values().stream().anyMatch(w -> w.delete == deletes && w.key.bucket().equals(bucket));
        }
    }

    /** Keys whose uploads are held (a copy to a peer under way), with how many holds each. */
    private final Map<ObjectKey, Integer> held = new java.util.concurrent.ConcurrentHashMap<>();

    void hold(ObjectKey key, int delta) {
        held.merge(key, delta, (a, b) -> a + b == 0 ? null : a + b);
    }

    /** Whether {@code w}'s upload waits: its key is held, or its barrier holds. */
    boolean waits(PendingWrite w) {
        return held.containsKey(w.key) || barrierHolds(w);
    }

    /**
     * Whether a write acknowledged before {@code w} under its barrier's prefix (another key's latest) is not in the
     * store yet: {@code w} waits for it.
     */
    private boolean barrierHolds(PendingWrite w) {
        String prefix = w.record.after();
        if (prefix == null) {
            return false;
        }
        synchronized (lock) {
            for (PendingWrite other : latest.values()) {
                if (other.sequence < w.sequence && !other.key.equals(w.key) && other.key.bucket().equals(w.key.bucket())
                        && other.key.key().startsWith(prefix) && other.durability != Durability.DURABLE) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The latest writes and deletes not in the store yet of the keys of {@code bucket} under {@code prefix}, in no order. */
    List<PendingWrite> latestIn(String bucket, String prefix) {
        List<PendingWrite> out = new ArrayList<>();
        synchronized (lock) {
            for (PendingWrite w : latest.values()) {
                if (w.key.bucket().equals(bucket) && w.key.key().startsWith(prefix)) {
                    out.add(w);
                }
            }
        }
        return out;
    }

    /**
     * A key whose latest write or delete is not in the store yet that a folder store could not hold beside {@code key}:
     * a folder of it, or one it is a folder of. Null when there is none.
     */
    ObjectKey folderConflict(ObjectKey key) {
        String k = key.key();
        synchronized (lock) {
            for (PendingWrite w : latest.values()) {
                ObjectKey local = w.key;
                if (local.bucket().equals(key.bucket()) && !local.key().equals(k)
                        && (k.startsWith(local.key() + "/") || local.key().startsWith(k + "/"))) {
                    return local;
                }
            }
        }
        return null;
    }
}
