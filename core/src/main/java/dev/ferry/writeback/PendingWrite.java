package dev.ferry.writeback;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import java.nio.file.Path;
import java.time.Instant;

/**
 * One acknowledged write (or delete) of write-back, from its journal record until it is durable in the store or
 * replaced: what reads of its key see meanwhile, and how far it got.
 *
 * <p>Thread-safety: the final fields are safe to read anywhere; {@code durability} and {@code error} are volatile and
 * set under the {@link PendingWrites}' lock, which also guards {@code dropped}.
 */
final class PendingWrite {
    final WriteRecord record;
    final long sequence;
    final ObjectKey key;
    final long size;
    final Instant written;
    final String etag;
    /** A DELETE waiting behind the key's pending writes: no data, and the key reads as gone. */
    final boolean delete;
    /** The local copy of the bytes (nothing there for a delete). */
    final Path data;
    volatile Durability durability = Durability.LOCAL;
    /** Why it failed for good, or, while it is LOCAL, why its last upload attempt failed (it is being retried). */
    volatile String error;
    /** An upload of it was started, by this process or one before (its journal says so): an attempt may be in flight. */
    volatile boolean sent;
    /** Taken out of the pending writes (and its bytes out of the pending count); guarded by the ledger's lock. */
    boolean dropped;

    /** The write {@code record} journaled, whose object will have {@code etag} in the store, its bytes kept at {@code data}. */
    PendingWrite(WriteRecord record, String etag, Path data) {
        this.record = record;
        this.sequence = record.sequence();
        this.key = record.key();
        this.size = record.size();
        this.written = record.written();
        this.etag = etag;
        this.delete = record.delete();
        this.data = data;
    }

    /** The object as reads see it; null for a delete. */
    ObjectMeta meta() {
        return delete ? null : new ObjectMeta(key, size, etag, null, written, record.attributes());
    }

    WriteStatus status() {
        return new WriteStatus(sequence, key, size, durability, error, etag, delete);
    }
}
