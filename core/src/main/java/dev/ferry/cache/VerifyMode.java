package dev.ferry.cache;

/** When a cached block's CRC32C is checked against its bytes. */
public enum VerifyMode {
    /** On every read from disk. */
    ALWAYS,
    /** On the first read of each block after the cache opens (the default): catches what happened while down. */
    FIRST_READ,
    /** Never (blocks recovered after a crash are still checked on their first read). */
    NEVER
}
