package dev.ferry.writeback;

import dev.ferry.store.ObjectMeta;

/**
 * A key whose latest acknowledged write or delete has not reached the store ({@link WriteBackStore#pendingIn}):
 * {@code meta} is the object as reads see it, or null for a delete (the store may still list the key).
 */
public record PendingKey(String key, ObjectMeta meta) {
}
