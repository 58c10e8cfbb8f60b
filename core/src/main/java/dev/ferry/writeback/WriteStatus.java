package dev.ferry.writeback;

import dev.ferry.store.ObjectKey;

/** One acknowledged write: its sequence number, key, size, where it stands, and the error if it failed. */
public record WriteStatus(long sequence, ObjectKey key, long size, Durability durability, String error) {
}
