package dev.ferry.mount;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoField;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.cryptomator.jfuse.api.Stat;

/**
 * What {@code stat} shows: folders and files owned by the mounting user, read-only modes on a read-only mount.
 * On a read-only mount a file's mtime also names its version: its whole seconds are the object's last-modified
 * time (S3 keeps no finer one) and its nanoseconds are taken from the ETag. The kernel drops a file's cached pages
 * when a stat shows it another mtime ({@code auto_inval_data}, which such a mount asks for, see {@link FerryFs}),
 * so a version written within the same second as the one before, at the same size, is still told apart.
 *
 * <p>Once {@link #recordShown} is called (a mount the kernel opens no file of), it also keeps the version of each
 * file whose attributes the kernel was given, by a stat or a folder's listing (READDIRPLUS) alike, and never shows
 * a file at a version older than one shown before ({@link #toShow}): the kernel may keep an earlier reply over a
 * later one, so what it holds and what reads return agree only if the versions shown never go back. Up to
 * {@link #MAX_SHOWN} files are kept, the listings' own bound; past it they are all forgotten at once, and a
 * forgotten file's next read takes the version its listing names (a HEAD when unlisted) and keeps it. Thread-safe.
 */
final class Attrs {
    private final boolean readOnly;
    private final int uid;
    private final int gid;
    static final int MAX_SHOWN = FolderListings.MAX_CACHED_ENTRIES;
    private final int maxShown;
    private final Map<ObjectKey, ObjectMeta> shown = new ConcurrentHashMap<>();
    private volatile boolean recording;

    Attrs(boolean readOnly) throws IOException {
        this(readOnly, MAX_SHOWN);
    }

    /** {@code maxShown}: how many files' shown versions are kept (see the class comment). */
    Attrs(boolean readOnly, int maxShown) throws IOException {
        this.readOnly = readOnly;
        this.maxShown = maxShown;
        this.uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        this.gid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:gid");
    }

    void dir(Stat stat) {
        stat.setMode(Stat.S_IFDIR | (readOnly ? 0555 : 0755));
        stat.setNLink((short) 2);
        stat.setUid(uid);
        stat.setGid(gid);
        stat.setSize(4096);
    }

    /** From now on, keep the version each file's attributes show (see {@link #shown}). */
    void recordShown() {
        recording = true;
    }

    /** The version {@code key}'s attributes last showed the kernel, since {@link #recordShown}; null if none. */
    ObjectMeta shown(ObjectKey key) {
        return shown.get(key);
    }

    /** The version to show the kernel for {@code meta}'s file: {@code meta}, or one shown before if that is newer. */
    ObjectMeta toShow(ObjectMeta meta) {
        ObjectMeta before = recording ? shown.get(meta.key()) : null;
        return before != null && isOlder(meta, before) ? before : meta;
    }

    /** {@code meta} was given to the kernel: kept, once {@link #recordShown} was called, unless a newer one was. */
    void remember(ObjectMeta meta) {
        if (recording) {
            if (shown.size() >= maxShown && !shown.containsKey(meta.key())) {
                shown.clear();
            }
            shown.merge(meta.key(), meta, (before, now) -> isOlder(now, before) ? before : now);
        }
    }

    private static boolean isOlder(ObjectMeta a, ObjectMeta b) {
        return a.lastModified().isBefore(b.lastModified());
    }

    /** {@code key} is no file (any more). */
    void forget(ObjectKey key) {
        shown.remove(key);
    }

    /** A file at version {@code meta} (see {@link #toShow} and {@link #remember} on a mount that records them). */
    void file(Stat stat, ObjectMeta meta) {
        Instant modified = meta.lastModified();
        file(stat, meta.size(), readOnly ? modified.with(ChronoField.NANO_OF_SECOND, versionNanos(meta.etag())) : modified);
    }

    /** The nanoseconds of a read-only mount's mtime for version {@code etag}: 0 to 999,999,999. */
    static long versionNanos(String etag) {
        return Math.floorMod((long) etag.hashCode() * 0x9E3779B97F4A7C15L, 1_000_000_000L);
    }

    /** A file of {@code size} bytes last modified at {@code modified} (one being written through the mount). */
    void file(Stat stat, long size, Instant modified) {
        stat.setMode(Stat.S_IFREG | (readOnly ? 0444 : 0644));
        stat.setNLink((short) 1);
        stat.setUid(uid);
        stat.setGid(gid);
        stat.setSize(size);
        stat.mTime().set(modified);
        stat.cTime().set(modified);
        stat.aTime().set(modified);
    }
}
