package dev.ferry.tier;

import dev.ferry.store.ObjectKey;
import dev.ferry.writeback.FlushResult;
import dev.ferry.writeback.PendingKey;
import dev.ferry.writeback.WriteBackStore;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;

/**
 * Write-back's state as the front ends ask about it ({@link NodeStores#writes()}): writes and deletes acknowledged
 * on local disk and not in the store yet, and the fence that waits for them. With write-through nothing is ever
 * pending and every fence holds at once. Thread-safe.
 */
public final class LocalWrites {
    private final WriteBackStore writeBack;

    LocalWrites(WriteBackStore writeBack) {
        this.writeBack = writeBack;
    }

    /** True when a write (or delete) of {@code key} is acknowledged and not uploaded yet: its reads are answered locally. */
    public boolean pending(ObjectKey key) {
        return writeBack != null && writeBack.holdsLocally(key);
    }

    /** True when a write to {@code bucket} is still only local (its bucket looks empty in the store, but is not). */
    public boolean heldIn(String bucket) {
        return writeBack != null && writeBack.holdsLocallyIn(bucket);
    }

    /** True when the latest of {@code key} is a delete waiting behind writes not uploaded yet (the store still holds the key). */
    public boolean deletePending(ObjectKey key) {
        return writeBack != null && writeBack.deletePending(key);
    }

    /** True when a delete in {@code bucket} waits behind writes not uploaded yet. */
    public boolean deletesPendingIn(String bucket) {
        return writeBack != null && writeBack.deletesPendingIn(bucket);
    }

    /** The keys of {@code bucket} under {@code prefix} whose latest write or delete is not in the store yet, in key order. */
    public List<PendingKey> pendingIn(String bucket, String prefix) {
        return writeBack == null ? List.of() : writeBack.pendingIn(bucket, prefix);
    }

    /** A write or delete still only local that a folder store could not hold beside {@code key} ({@link WriteBackStore#localFolderConflict}); null when none. */
    public ObjectKey localFolderConflict(ObjectKey key) {
        return writeBack == null ? null : writeBack.localFolderConflict(key);
    }

    /** Waits up to {@code timeout} until the writes {@code which} selects that were acknowledged before this call are durable. */
    public FlushResult flush(Predicate<ObjectKey> which, Duration timeout) throws InterruptedIOException {
        return writeBack == null ? FlushResult.NONE : writeBack.flush(which, timeout);
    }

    /** {@link #flush(Predicate, Duration)} of every write. */
    public FlushResult flush(Duration timeout) throws InterruptedIOException {
        return writeBack == null ? FlushResult.NONE : writeBack.flush(timeout);
    }

    /**
     * When a write of {@code key} is still only local, waits up to {@code timeout} for write-back's fence; true when
     * it is still only local after that (a delete of it now would be overtaken by its upload).
     */
    public boolean stillPendingAfterFlush(ObjectKey key, Duration timeout) throws InterruptedIOException {
        if (!pending(key)) {
            return false;
        }
        writeBack.flush(timeout);
        return pending(key);
    }

    /** Objects acknowledged and not uploaded yet. */
    public long pendingObjects() {
        return writeBack == null ? 0 : writeBack.stats().pendingObjects();
    }
}
