package dev.ferry.mount;

import dev.ferry.cache.VerifyMode;
import dev.ferry.util.Sizes;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Settings of {@code ferry mount}. Keys (as the command's flags, without {@code --}) and defaults:
 * <ul>
 *   <li>{@code mountpoint}: an existing empty folder (required).
 *   <li>{@code store-root} or {@code upstream}: a folder as the object store (buckets are subfolders), or an S3
 *       endpoint (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY); exactly one.
 *   <li>{@code cache-dir} (~/.ferry/mount-cache): the local tier; write-back keeps its journal beside it
 *       ({@code <cache-dir>-writeback}) and files being written are spooled in {@code <cache-dir>-spool}.
 *   <li>{@code cache-size} (10GiB), {@code block-size} (4MiB): the local tier's capacity and block size; a
 *       {@code cache-size} of 0 keeps no local tier (over a ferry daemon on the same node, whose tier caches,
 *       prefetches by its jobs' plans and reads ahead: a second tier would hold the same bytes twice).
 *   <li>{@code read-ahead} (64MiB): how far past a sequential reader the blocks are fetched, in parallel, one
 *       ranged GET per block; 0 turns it off.
 *   <li>{@code metadata-ttl} (60s): how long an object's size and ETag, from its folder's listing or a HEAD, are
 *       trusted before a lookup or an open asks the store again (a folder listed before is listed again, one LIST
 *       for all its files, instead of a HEAD per file), i.e. how soon an object replaced upstream is seen; the
 *       kernel keeps names and attributes as long ({@code entry_timeout}, {@code attr_timeout}). 0: every lookup
 *       and open asks.
 *   <li>{@code read-only} (false): refuse every write with EROFS.
 *   <li>{@code write-through} (false): upload a written file when it is closed or fsync'd, instead of
 *       journaling it locally and uploading in the background (write-back, the default).
 *   <li>{@code write-back-quota} (10GiB): bytes of written files kept locally awaiting upload.
 *   <li>{@code flush-timeout} (60s): at unmount, how long to wait for pending uploads.
 *   <li>{@code first-byte-timeout} (10s): as {@code ferry serve}: a read waits this long for the store to answer,
 *       a write for its answer or for the store to take more of its body.
 *   <li>{@code verify} (on-load): as {@code ferry serve}: when a cached block is checked against its CRC32C before a
 *       read returns its bytes ({@link VerifyMode}); {@code first-read} and {@code never} are opt-outs.
 * </ul>
 */
public record MountConfig(
        Path mountpoint,
        Path storeRoot,
        URI upstream,
        Path cacheDir,
        long cacheSize,
        int blockSize,
        long readAhead,
        Duration metadataTtl,
        boolean readOnly,
        boolean writeThrough,
        long writeBackQuota,
        Duration flushTimeout,
        Duration firstByteTimeout,
        VerifyMode verify) {

    public static final Set<String> KEYS = Set.of("mountpoint", "store-root", "upstream", "cache-dir", "cache-size", "block-size",
            "read-ahead", "metadata-ttl", "read-only", "write-through", "write-back-quota", "flush-timeout", "first-byte-timeout",
            "verify");

    public MountConfig {
        Objects.requireNonNull(mountpoint, "mountpoint is null");
        Objects.requireNonNull(cacheDir, "cacheDir is null");
        Objects.requireNonNull(metadataTtl, "metadataTtl is null");
        Objects.requireNonNull(flushTimeout, "flushTimeout is null");
        Objects.requireNonNull(firstByteTimeout, "firstByteTimeout is null");
        Objects.requireNonNull(verify, "verify is null");
        if ((storeRoot == null) == (upstream == null)) {
            throw new IllegalArgumentException("give exactly one of --store-root DIR (a folder as the object store) or --upstream URL");
        }
        if (cacheSize < 0) {
            throw new IllegalArgumentException("cache-size must not be negative (0: no local tier): " + cacheSize);
        }
        if (blockSize < 4096) {
            throw new IllegalArgumentException("block-size must be at least 4KiB: " + blockSize);
        }
        if (readAhead < 0) {
            throw new IllegalArgumentException("read-ahead must not be negative: " + readAhead);
        }
        if (writeBackQuota <= 0) {
            throw new IllegalArgumentException("write-back-quota must be positive: " + writeBackQuota);
        }
    }

    /** False with {@code cache-size 0}: reads go to the store (a ferry daemon) with no local tier of the mount's own. */
    public boolean hasLocalTier() {
        return cacheSize > 0;
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
        Path home = Path.of(System.getProperty("user.home"), ".ferry");
        String root = settings.get("store-root");
        String up = settings.get("upstream");
        URI upstream = null;
        if (up != null) {
            try {
                upstream = URI.create(up);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("upstream must be a URL such as https://s3.eu-west-1.amazonaws.com, not '" + up + "'");
            }
            if (upstream.getScheme() == null || upstream.getHost() == null) {
                throw new IllegalArgumentException("upstream must be a URL such as https://s3.eu-west-1.amazonaws.com, not '" + up + "'");
            }
        }
        long blockSize = size(settings, "block-size", "4MiB");
        if (blockSize > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("block-size must be below 2GiB: " + settings.get("block-size"));
        }
        return new MountConfig(
                Path.of(mp).toAbsolutePath().normalize(),
                root == null ? null : Path.of(root).toAbsolutePath().normalize(),
                upstream,
                Path.of(settings.getOrDefault("cache-dir", home.resolve("mount-cache").toString())).toAbsolutePath().normalize(),
                size(settings, "cache-size", "10GiB"),
                (int) blockSize,
                size(settings, "read-ahead", "64MiB"),
                duration(settings, "metadata-ttl", "60s"),
                bool(settings, "read-only"),
                bool(settings, "write-through"),
                size(settings, "write-back-quota", "10GiB"),
                duration(settings, "flush-timeout", "60s"),
                duration(settings, "first-byte-timeout", "10s"),
                VerifyMode.parse(settings.getOrDefault("verify", "on-load")));
    }

    private static long size(Map<String, String> settings, String key, String dflt) {
        String v = settings.getOrDefault(key, dflt);
        try {
            return Sizes.parse(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(key + " must be a size such as 4MiB or 10GiB, not '" + v + "'");
        }
    }

    /** {@code 10s}, {@code 1500ms}, {@code 2m}; a bare number is seconds. */
    private static Duration duration(Map<String, String> settings, String key, String dflt) {
        String v = settings.getOrDefault(key, dflt);
        Matcher m = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m)?").matcher(v.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException(key + " must be a duration such as 10s, 500ms or 2m, not '" + v + "'");
        }
        double n = Double.parseDouble(m.group(1));
        double millis = m.group(2) == null || m.group(2).equals("s") ? n * 1000 : m.group(2).equals("m") ? n * 60_000 : n;
        return Duration.ofMillis(Math.round(millis));
    }

    private static boolean bool(Map<String, String> settings, String key) {
        String v = settings.getOrDefault(key, "false");
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on", "1" -> true;
            case "false", "no", "off", "0" -> false;
            default -> throw new IllegalArgumentException(key + " must be true or false, not '" + v + "'");
        };
    }
}
