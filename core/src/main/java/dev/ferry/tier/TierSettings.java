package dev.ferry.tier;

import dev.ferry.cache.VerifyMode;
import dev.ferry.settings.Codec;
import dev.ferry.settings.Setting;
import dev.ferry.settings.Settings;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The settings of the tiers, defined once for every command that runs a {@link TierStack} ({@code ferry serve},
 * {@code ferry mount}): the origin, the local tier, the first-byte bound, write-back's quota, read-ahead. Each
 * command's table is {@link #ROWS} plus its own rows; docs/configuration.md lists them under "Tier settings"
 * (a test checks the page against the rows). A command does not define these keys again ({@code SettingTable}
 * refuses a key twice, {@code ArchitectureTest} a row of these keys outside core).
 */
public final class TierSettings {
    private TierSettings() {
    }

    public static final Codec<VerifyMode> VERIFY_CODEC = new Codec<>((k, v) -> VerifyMode.parse(v), VerifyMode::settingName);

    public static final Setting<URI> UPSTREAM = Setting.flag("upstream", "URL", Codec.URL, "",
            "S3 endpoint to front, e.g. https://s3.eu-west-1.amazonaws.com (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY).");
    public static final Setting<Path> STORE_ROOT = Setting.flag("store-root", "DIR", Codec.OPTIONAL_PATH, "",
            "A folder to use as the object store (buckets are subfolders).");
    public static final Setting<Long> CACHE_SIZE = Setting.flag("cache-size", "SIZE", Codec.SIZE, "10GiB",
            "Local tier capacity, e.g. 500GiB (default 10GiB; ferry mount keeps none with 0, over a ferry daemon whose tier caches).");
    public static final Setting<Integer> BLOCK_SIZE = Setting.flag("block-size", "SIZE", Codec.INT_SIZE, "4MiB",
            "Cache block size (default 4MiB).");
    public static final Setting<VerifyMode> VERIFY = Setting.flag("verify", "WHEN", VERIFY_CODEC, "on-load",
            "When a cached block is checked against its CRC32C before its bytes leave: on-load (default: unless they are "
                    + "provably the bytes last checked), always (every reply from a checked copy, no sendfile), or the opt-outs "
                    + "first-read and never, which serve a block corrupted on disk while ferry runs.");
    public static final Setting<Long> WRITE_BACK_QUOTA = Setting.flag("write-back-quota", "SIZE", Codec.SIZE, "8GiB",
            "Written bytes kept locally awaiting upload, at most; past it, writes go through to the object store (default 8GiB).");
    public static final Setting<Duration> WRITE_SETTLE_WINDOW = Setting.flag("write-settle-window", "DURATION", Codec.DURATION, "15m",
            "With write-back: how long an upload attempt given up on (no answer) may still land in the object store; the newest write "
                    + "of its key is checked in the store once this has passed, and uploaded again if the late attempt overtook it, "
                    + "before a flush calls it durable (default 15m: S3, MinIO and Ceph refuse a signed request 15 minutes after its "
                    + "date; shorter only where nothing between ferry and the store can hold a request that long). A folder store "
                    + "(--store-root) needs none.");
    public static final Setting<Duration> FIRST_BYTE_TIMEOUT = Setting.flag("first-byte-timeout", "DURATION", Codec.DURATION, "10s",
            "How long a read waits for the object store to start answering, retries included, before it fails "
                    + "(the daemon answers 503 ServiceUnavailable), e.g. 10s (default) or 500ms. Writes too: a DELETE's answer, "
                    + "a PUT's once the store stops taking its body.");
    public static final Setting<Duration> READ_STALL_TIMEOUT = Setting.flag("read-stall-timeout", "DURATION", Codec.DURATION, "20s",
            "How long a read from the object store may go without a byte, summed over its resumes, before it fails: a body that "
                    + "stops for half of this is cut and resumed where it stopped; past all of it the reader's answer ends early (its "
                    + "client sees a body shorter than its Content-Length, and retries), e.g. 20s (default).");
    public static final Setting<Duration> METADATA_TTL = Setting.flag("metadata-ttl", "DURATION", Codec.TTL, "60s",
            "How long an object's size and ETag (from a listing, a HEAD or a GET) are trusted before a read, a lookup or an open asks the "
                    + "object store again; up to twice this they still serve, revalidated in the background; the mount's kernel keeps names "
                    + "and attributes as long, up to a day (default 60s; 0: every read asks; indefinite: never asked again, for data that "
                    + "does not change behind ferry's back, as Mountpoint's --metadata-ttl indefinite). Writes and deletes through ferry "
                    + "are seen at once whatever the TTL. A job registered with the daemon has its manifest versions trusted while it is registered.");
    /** ferry mount's only, so far: the daemon reads a fixed 16 blocks ahead ({@code SequentialReadAhead.Config.DEFAULT}). */
    public static final Setting<Long> READ_AHEAD = Setting.flag("read-ahead", "SIZE", Codec.SIZE, "256MiB",
            "How far ahead of a sequential reader to fetch, one ranged GET per block, in parallel; a file of at most this size, "
                    + "and at most 64MiB, is fetched whole at its first read (default 256MiB; 0: off).");

    public static final Setting<Boolean> READ_AHEAD_FOLDERS = Setting.flag("read-ahead-folders", "true|false", Codec.BOOL, "true",
            "Whether a folder of small objects (each within a block) that readers without a plan keep missing is fetched ahead of "
                    + "them: listed at its 4th miss, the rest fetched once its misses reach 1 in 32 of its objects, at most a quarter "
                    + "of cache-size (default true).");

    /** The rows every command that runs a tier stack has. */
    public static final List<Setting<?>> ROWS = List.of(UPSTREAM, STORE_ROOT, CACHE_SIZE, BLOCK_SIZE, VERIFY, WRITE_BACK_QUOTA,
            WRITE_SETTLE_WINDOW, FIRST_BYTE_TIMEOUT, READ_STALL_TIMEOUT, METADATA_TTL, READ_AHEAD_FOLDERS);

    /** Every tier setting defined here, {@link #ROWS} and those only some commands have yet ({@link #READ_AHEAD}). */
    public static final List<Setting<?>> ALL = List.of(UPSTREAM, STORE_ROOT, CACHE_SIZE, BLOCK_SIZE, VERIFY, WRITE_BACK_QUOTA,
            WRITE_SETTLE_WINDOW, FIRST_BYTE_TIMEOUT, READ_STALL_TIMEOUT, METADATA_TTL, READ_AHEAD_FOLDERS, READ_AHEAD);

    /**
     * How long an S3 client of the origin waits for a byte once a request is out: half of read-stall-timeout, so that a
     * stalled body is cut, resumed once, and the read fails when the whole budget is gone.
     */
    public static Duration socketTimeout(Settings s) {
        return s.get(READ_STALL_TIMEOUT).dividedBy(2);
    }

    /** Checks the tier settings of {@code s} (those of its table), each with one sentence naming the key. */
    public static void validate(Settings s) {
        if (s.get(BLOCK_SIZE) < 4096) {
            throw new IllegalArgumentException("block-size must be at least 4KiB: " + s.get(BLOCK_SIZE));
        }
        if (s.get(WRITE_BACK_QUOTA) < 1) {
            throw new IllegalArgumentException("write-back-quota must be positive: " + s.get(WRITE_BACK_QUOTA));
        }
        if (s.get(WRITE_SETTLE_WINDOW).isNegative()) {
            throw new IllegalArgumentException("write-settle-window must not be negative: " + WRITE_SETTLE_WINDOW.format(s.get(WRITE_SETTLE_WINDOW)));
        }
        Duration fbt = s.get(FIRST_BYTE_TIMEOUT);
        if (fbt.isNegative() || fbt.isZero()) {
            throw new IllegalArgumentException("first-byte-timeout must be positive: " + FIRST_BYTE_TIMEOUT.format(fbt));
        }
        Duration stall = s.get(READ_STALL_TIMEOUT);
        if (stall.compareTo(Duration.ofSeconds(2)) < 0) {
            throw new IllegalArgumentException("read-stall-timeout must be at least 2s: " + READ_STALL_TIMEOUT.format(stall));
        }
        if (s.get(METADATA_TTL).isNegative()) {
            throw new IllegalArgumentException("metadata-ttl must not be negative: " + s.get(METADATA_TTL));
        }
    }
}
