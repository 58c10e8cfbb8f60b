package dev.ferry.writeback;

import dev.ferry.store.ObjectKey;

/**
 * One acknowledged write: its sequence number, key, size, where it stands, the error if it failed, the
 * ETag the object has (in the store, or will have once uploaded; null for a delete), and whether it is a
 * DELETE (of a key whose writes were still pending: it is uploaded after them).
 */
public record WriteStatus(long sequence, ObjectKey key, long size, Durability durability, String error, String etag, boolean delete) {
    /** A write (not a delete). */
    public WriteStatus(long sequence, ObjectKey key, long size, Durability durability, String error, String etag) {
        this(sequence, key, size, durability, error, etag, false);
    }
}
