package dev.ferry.writeback;

/** Where an acknowledged write stands. */
public enum Durability {
    /** fsync'd on local disk, waiting for (or in) upload. */
    LOCAL,
    /**
     * uploaded, while an earlier attempt at its key that ferry gave up on may still land in the store: once that
     * cannot happen any more, the store is checked (and the write uploaded again if it was overtaken), then it is
     * durable. Fences wait for it, and reads are served from the local copy meanwhile.
     */
    SETTLING,
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
