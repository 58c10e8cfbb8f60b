package dev.ferry.writeback;

/** Where an acknowledged write stands. */
public enum Durability {
    /** fsync'd on local disk, waiting for (or in) upload. */
    LOCAL,
    /** in the object store. */
    DURABLE,
    /**
     * the object store refused it for good (403, 400...) or kept other bytes than were written; it is kept
     * locally, and reads are served from there, until a later write or delete of its key is durable.
     */
    FAILED,
    /** a failed write that a later write or delete of its key, now durable, replaced: nothing of it is owed to the store. */
    SUPERSEDED
}
