package dev.ferry.writeback;

import dev.ferry.store.ObjectKey;

/**
 * One acknowledged write: its sequence number, key, size, where it stands, the error if it failed, and
 * the ETag the object has (in the store, or will have once uploaded).
 */
public record WriteStatus(long sequence, ObjectKey key, long size, Durability durability, String error, String etag) {
}
