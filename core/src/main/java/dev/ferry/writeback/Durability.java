package dev.ferry.writeback;

/** Where an acknowledged write stands. */
public enum Durability {
    /** fsync'd on local disk, waiting for (or in) upload. */
    LOCAL,
    /** in the object store. */
    DURABLE,
    /** the object store refused it for good (403, 400...); it is kept locally, never dropped. */
    FAILED
}
