package dev.ferry.cache;

/**
 * When a cached block's bytes are checked against the CRC32C in its header before they leave the cache (to a
 * reader of {@link CachingStore#get}, the daemon's sendfile path, the mount). A block that fails is dropped
 * (counted as evicted-corrupt) and the read is served from upstream instead. See {@link BlockCheck} for the
 * reasoning and the measured cost.
 */
public enum VerifyMode {
    /**
     * Before every use, from a copy read into memory that is then what is served, so never with sendfile: the
     * strictest, and the costliest (any read of a block, however short, reads and checks all of it).
     */
    ALWAYS,
    /**
     * The default: before a block's bytes leave, unless they are provably the bytes last checked: the file is
     * the same one, unchanged (inode, size and ctime as when it was checked), and every page about to be sent
     * is still in the page cache (mincore), so nothing has been read from the device since. A write to the file
     * or a page reloaded from the device means a check (reading the whole block) first. Never serves a block
     * that was corrupted on disk, whether the daemon was running or not.
     */
    ON_LOAD,
    /**
     * Opt-out: only the first read of each block after the cache opens (or after it was written) is checked;
     * a block corrupted on disk while ferry runs is served as it is. Catches only what happened while down.
     */
    FIRST_READ,
    /**
     * Opt-out: never checked, except blocks found by a scan after a crash, which are checked on their first
     * read (their file may be torn). A block corrupted on disk is served as it is.
     */
    NEVER;

    /** The mode a setting names: {@code on-load}, {@code ON_LOAD}, {@code always}, ... (case and - or _ do not matter). */
    public static VerifyMode parse(String text) {
        String name = text == null ? "" : text.trim().replace('-', '_').toUpperCase(java.util.Locale.ROOT);
        for (VerifyMode m : values()) {
            if (m.name().equals(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException("verify must be one of on-load (the default), always, first-read or never, not '"
                + text + "'");
    }

    /** The setting's spelling: {@code on-load}, {@code always}, {@code first-read}, {@code never}. */
    public String settingName() {
        return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
}
