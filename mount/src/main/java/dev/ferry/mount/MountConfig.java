package dev.ferry.mount;

import dev.ferry.cache.VerifyMode;
import dev.ferry.settings.Codec;
import dev.ferry.settings.Setting;
import dev.ferry.settings.SettingTable;
import dev.ferry.settings.Settings;
import dev.ferry.tier.TierSettings;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Settings of {@code ferry mount}: the mountpoint (the command's argument) and a table of settings, each a flag
 * {@code --KEY}. The table is the tier settings every front end shares ({@link TierSettings}: store-root or
 * upstream, cache-size, block-size, verify, write-back-quota, first-byte-timeout, metadata-ttl, and read-ahead)
 * plus the mount's own rows below; docs/configuration.md lists them with their defaults (a test checks it), and
 * {@code ferry mount}'s flags are made from {@link #settings()}. A {@code cache-size} of 0 keeps no local tier
 * (over a ferry daemon on the same node, whose tier caches, prefetches by its jobs' plans and reads ahead: a
 * second tier would hold the same bytes twice). Immutable.
 */
public final class MountConfig {
    private static final Setting<Path> CACHE_DIR = Setting.flag("cache-dir", "DIR", Codec.PATH, "~/.ferry/mount-cache",
            "The local tier's folder (default ~/.ferry/mount-cache); written files are journaled in <cache-dir>-writeback and "
                    + "spooled in <cache-dir>-spool.");
    private static final Setting<Boolean> READ_ONLY = Setting.toggle("read-only", "Refuse every write (EROFS).");
    private static final Setting<Boolean> WRITE_THROUGH = Setting.toggle("write-through",
            "Upload a written file before close (or fsync) returns, instead of write-back.");
    private static final Setting<Duration> FLUSH_TIMEOUT = Setting.flag("flush-timeout", "DURATION", Codec.DURATION, "60s",
            "At unmount, how long to wait for pending uploads (default 60s).");

    private static final Setting<Long> KERNEL_READ_AHEAD = Setting.flag("kernel-read-ahead", "SIZE", Codec.SIZE, "1MiB",
            "How far the kernel reads ahead of a sequential reader, in FUSE reads of up to 1 MiB (the mount's read_ahead_kb; "
                    + "default 1MiB; 0 leaves the kernel's own, 128KiB); needs root.");

    /** The most {@code kernel-read-ahead} takes: the kernel's bound for a device's read_ahead_kb is far higher, but past this
     * a reader that stops early only wastes what was read for it. */
    static final long MAX_KERNEL_READ_AHEAD = 64L << 20;

    private static final SettingTable TABLE = SettingTable.of(TierSettings.ROWS, List.of(TierSettings.READ_AHEAD),
            List.of(CACHE_DIR, READ_ONLY, WRITE_THROUGH, FLUSH_TIMEOUT, KERNEL_READ_AHEAD));

    /** The keys {@link #from} takes: {@code mountpoint} and the table's. */
    public static final Set<String> KEYS = keys();

    private final Path mountpoint;
    private final Settings values;

    private MountConfig(Path mountpoint, Settings values) {
        this.mountpoint = Objects.requireNonNull(mountpoint, "mountpoint is null");
        this.values = values;
        if ((storeRoot() == null) == (upstream() == null)) {
            throw new IllegalArgumentException("give exactly one of --store-root DIR (a folder as the object store) or --upstream URL");
        }
        TierSettings.validate(values);
        long kernelReadAhead = values.get(KERNEL_READ_AHEAD);
        if (kernelReadAhead < 0 || kernelReadAhead > MAX_KERNEL_READ_AHEAD || kernelReadAhead % 4096 != 0) {
            throw new IllegalArgumentException("kernel-read-ahead must be a whole number of 4 KiB pages from 0 to 64MiB, not "
                    + kernelReadAhead + " bytes");
        }
    }

    /** The table's rows, in order: each is a flag of {@code ferry mount}. */
    public static List<Setting<?>> settings() {
        return TABLE.rows();
    }

    /** Reads the settings a command line gave (keys of {@link #KEYS}; absent keys take their defaults). */
    public static MountConfig from(Map<String, String> settings) {
        for (String k : settings.keySet()) {
            if (!KEYS.contains(k)) {
                throw new IllegalArgumentException("unknown mount setting '" + k + "'; known: " + new TreeSet<>(KEYS));
            }
        }
        String mp = settings.get("mountpoint");
        if (mp == null || mp.isBlank()) {
            throw new IllegalArgumentException("the mountpoint is missing: ferry mount MOUNTPOINT --store-root DIR");
        }
        Map<String, String> rest = new LinkedHashMap<>(settings);
        rest.remove("mountpoint");
        return new MountConfig(Path.of(mp).toAbsolutePath().normalize(), TABLE.defaults().with(rest));
    }

    /** The values of the table, the tier settings among them. */
    public Settings values() {
        return values;
    }

    /** An existing empty folder. */
    public Path mountpoint() {
        return mountpoint;
    }

    /** A folder as the object store (buckets are subfolders), or null. */
    public Path storeRoot() {
        Path p = values.get(TierSettings.STORE_ROOT);
        return p == null ? null : p.toAbsolutePath().normalize();
    }

    /** An S3 endpoint, or null. */
    public URI upstream() {
        return values.get(TierSettings.UPSTREAM);
    }

    public Path cacheDir() {
        return values.get(CACHE_DIR).toAbsolutePath().normalize();
    }

    public long cacheSize() {
        return values.get(TierSettings.CACHE_SIZE);
    }

    public int blockSize() {
        return values.get(TierSettings.BLOCK_SIZE);
    }

    /** How far past a sequential reader blocks are fetched, in bytes; 0: off. */
    public long readAhead() {
        return values.get(TierSettings.READ_AHEAD);
    }

    /** The kernel's read-ahead for this mount's files, in bytes (a multiple of 4 KiB); 0: the kernel's own. */
    public long kernelReadAhead() {
        return values.get(KERNEL_READ_AHEAD);
    }

    public Duration metadataTtl() {
        return values.get(TierSettings.METADATA_TTL);
    }

    public boolean readOnly() {
        return values.get(READ_ONLY);
    }

    public boolean writeThrough() {
        return values.get(WRITE_THROUGH);
    }

    public long writeBackQuota() {
        return values.get(TierSettings.WRITE_BACK_QUOTA);
    }

    public Duration flushTimeout() {
        return values.get(FLUSH_TIMEOUT);
    }

    public Duration firstByteTimeout() {
        return values.get(TierSettings.FIRST_BYTE_TIMEOUT);
    }

    public VerifyMode verify() {
        return values.get(TierSettings.VERIFY);
    }

    /** False with {@code cache-size 0}: reads go to the store (a ferry daemon) with no local tier of the mount's own. */
    public boolean hasLocalTier() {
        return cacheSize() > 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MountConfig c && mountpoint.equals(c.mountpoint) && values.equals(c.values);
    }

    @Override
    public int hashCode() {
        return mountpoint.hashCode() * 31 + values.hashCode();
    }

    @Override
    public String toString() {
        return "MountConfig{mountpoint=" + mountpoint + ", " + values.describe() + "}";
    }

    private static Set<String> keys() {
        Set<String> keys = new LinkedHashSet<>();
        keys.add("mountpoint");
        keys.addAll(TABLE.keys());
        return Collections.unmodifiableSet(keys);
    }
}
