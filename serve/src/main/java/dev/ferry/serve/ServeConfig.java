package dev.ferry.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.ferry.serve.membership.GroupSpec;
import dev.ferry.serve.node.NodeConfig;
import dev.ferry.serve.protocol.VirtualHosts;
import dev.ferry.settings.Codec;
import dev.ferry.settings.Setting;
import dev.ferry.settings.SettingTable;
import dev.ferry.settings.Settings;
import dev.ferry.store.ObjectKey;
import dev.ferry.tier.TierSettings;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Everything {@code ferry serve} is told, by flag or by YAML file: the two use the same keys (a flag
 * {@code --cache-size} is the key {@code cache-size}); flags win over the file. Defaults are pinned by
 * a test and listed in docs/configuration.md (a test checks the page against the table).
 *
 * <p>Design note: the settings are a table, one {@link Setting} per key: its YAML key (also the flag's name),
 * its flag's parameter label or none, the default (as the page and a config file write it), the codec that reads
 * and prints it, and the one-line description (the flag's help). The tier settings (origin, local tier, first
 * byte, write-back quota) are {@link TierSettings}' rows in core, shared with {@code ferry mount}; the daemon's
 * own rows are defined below. The config file reader, {@link #describe()}, {@link #with(Map)} and
 * {@code ferry serve}'s flags all walk the table, so a new setting is a new row, plus an accessor if code reads
 * it (and a rule in {@link #validate()} if it needs one). As Kafka's {@code ConfigDef} and Iceberg's {@code S3FileIOProperties} keep keys, defaults and
 * docs together.
 *
 * <p>Immutable and thread-safe.
 */
public final class ServeConfig implements NodeConfig {

    /** {@code eviction-follows}: every registered job's future. */
    public static final String ALL_JOBS = NodeConfig.ALL_JOBS;
    /** {@code eviction-follows}: the plan of the job that reported last. */
    public static final String LAST_REPORT = NodeConfig.LAST_REPORT;

    private static final Codec<GroupSpec> GROUP_CODEC = new Codec<>((k, v) -> GroupSpec.parse(v), GroupSpec::text);
    private static final Codec<List<String>> DOMAINS_CODEC = new Codec<>((k, v) -> VirtualHosts.parse(v), l -> String.join(",", l));

    // The daemon's own rows; the tier settings (origin, local tier, first byte, write-back quota) are TierSettings'
    // rows in core. A description that names a default must name the row's (ServeConfigTest checks it).

    private static final Setting<String> BIND = Setting.flag("bind", "ADDR", Codec.TEXT, "127.0.0.1",
            "Address to listen on (default 127.0.0.1). Others need --access-key/--secret-key or --insecure.");
    private static final Setting<Integer> PORT = Setting.flag("port", "N", Codec.INT, "9099",
            "Port (default 9099; 0 picks a free one).");
    private static final Setting<Path> DATA_DIR = Setting.flag("data-dir", "DIR", Codec.PATH, "~/.ferry/data",
            "The embedded store's folder (default ~/.ferry/data).");
    private static final Setting<String> PROFILE = Setting.flag("profile", "NAME", Codec.WORD, "cloud",
            "Embedded store profile: cloud (default) or none.");
    private static final Setting<Path> CACHE_DIR = Setting.flag("cache-dir", "DIR", Codec.PATH, "~/.ferry/cache",
            "The local tier's folder (default ~/.ferry/cache).");
    private static final Setting<Long> PREFETCH_BYTES = Setting.flag("prefetch-bytes", "SIZE", Codec.SIZE, "256MiB",
            "At most this much prefetched ahead of a job's position; the depth follows time to need (default 256MiB).");
    private static final Setting<String> ACCESS_KEY = Setting.flag("access-key", "KEY", Codec.OPTIONAL_TEXT, "",
            "Access key clients sign with (AWS Signature V4); also FERRY_ACCESS_KEY.");
    private static final Setting<String> SECRET_KEY = Setting.flag("secret-key", "SECRET", Codec.SECRET, "",
            "Secret key; also FERRY_SECRET_KEY.");
    private static final Setting<Boolean> INSECURE = Setting.toggle("insecure",
            "Allow a non-loopback bind address without credentials (anyone reaching the port can use it).");
    private static final Setting<Boolean> WRITE_BACK = Setting.toggle("write-back",
            "Acknowledge PUTs once on local disk and upload them in the background.");
    private static final Setting<Integer> MAX_HEADER_BYTES = Setting.fileOnly("max-header-bytes", Codec.INT_BYTES, "16384",
            "A request's line and headers, at most.");
    private static final Setting<Long> MAX_XML_BYTES = Setting.fileOnly("max-xml-bytes", Codec.SIZE, "1MiB",
            "An XML or JSON request body, at most.");
    private static final Setting<Long> MAX_OBJECT_BYTES = Setting.fileOnly("max-object-bytes", Codec.SIZE, "5GiB",
            "One PUT or one part, at most.");
    private static final Setting<GroupSpec> GROUP = Setting.flag("group", "URL,...|dns:NAME:PORT|etcd:URL/PREFIX", GROUP_CODEC, "",
            "The regional group, each object read from the origin by its owner only: every member daemon's URL, "
                    + "comma-separated, in the same order on every node; or dns:NAME:PORT, the addresses of a DNS name (a "
                    + "headless Service), looked up every group-refresh; or etcd:http://HOST:2379/PREFIX, daemons registered "
                    + "under a key prefix in etcd.");
    private static final Setting<URI> SELF = Setting.flag("self", "URL", Codec.URL, "",
            "This daemon's URL in the group (default: the member on this daemon's port at one of this host's addresses; "
                    + "in an etcd group, the URL it registers: http://BIND:PORT, or this host's address with a wildcard bind).");
    private static final Setting<Duration> GROUP_REFRESH = Setting.flag("group-refresh", "DURATION", Codec.DURATION, "2s",
            "How often a dns: group's name is looked up again and an etcd: group's lease renewed (its TTL is five "
                    + "times this, at least 5 s), e.g. 2s (default).");
    private static final Setting<Duration> GROUP_PROBE = Setting.flag("group-probe", "DURATION", Codec.DURATION, "500ms",
            "How often every other group member is asked whether it answers; one that does not is skipped for the next "
                    + "owner of its objects (default: 500ms; 0 turns probing off).");
    private static final Setting<Duration> PEER_GRACE = Setting.flag("peer-grace", "DURATION", Codec.DURATION, "10s",
            "How long a group member whose writes this daemon keeps copies of (x-ferry-durability: peer) may be silent, "
                    + "or answer with another disk, before those copies become this daemon's own and are uploaded from "
                    + "here (default: 10s).");
    private static final Setting<Path> SHARED_TIER = Setting.flag("shared-tier", "DIR", Codec.OPTIONAL_PATH, "",
            "A shared file system's folder, a tier between the group and the origin.");
    private static final Setting<Duration> HEADER_TIMEOUT = Setting.flag("header-timeout", "DURATION", Codec.DURATION, "30s",
            "How long a request's line and headers may take to arrive, from their first byte, before the connection is "
                    + "closed (default: 30s).");
    private static final Setting<Duration> MULTIPART_TTL = Setting.flag("multipart-ttl", "DURATION", Codec.DURATION, "7d",
            "How long an unfinished multipart upload is kept before its parts are deleted, e.g. 7d (default), 12h.");
    private static final Setting<List<String>> VIRTUAL_HOST = Setting.flag("virtual-host", "DOMAIN,...", DOMAINS_CODEC, "localhost",
            "Domains under which a Host of bucket.DOMAIN is virtual-hosted-style addressing of that bucket "
                    + "(default: localhost; an empty value turns it off).");
    private static final Setting<String> EVICTION_FOLLOWS = Setting.flag("eviction-follows", "WHOSE", Codec.WORD, ALL_JOBS,
            "Whose plans eviction follows when several jobs are registered: all-jobs (default: every job's future, a block "
                    + "needed by any job is kept by the soonest use) or last-report (the job that reported progress last).");
    private static final Setting<String> SCRATCH_BUCKET = Setting.flag("scratch-bucket", "BUCKET", Codec.OPTIONAL_TEXT, "",
            "A bucket kept on this node's disk only and never uploaded (PUT, GET, LIST, DELETE work there against local disk).");
    private static final Setting<Long> SCRATCH_QUOTA = Setting.flag("scratch-quota", "SIZE", Codec.SIZE, "10GiB",
            "The scratch bucket's size at most; a write past it gets 507 InsufficientStorage (default: 10GiB).");
    private static final Setting<Duration> SCRATCH_TTL = Setting.flag("scratch-ttl", "DURATION", Codec.DURATION, "24h",
            "How long a scratch object lives after it was written (default: 24h).");
    private static final Setting<Double> DECODED = Setting.flag("decoded", "SHARE", new Codec<>(ServeConfig::share, ServeConfig::shareText), "auto",
            "The share of the local tier that keeps decoded samples for loaders that ask (docs/decoded-cache.md): auto (default: "
                    + "chosen from what the loaders measure), off, or a fixed share such as 50%.");

    /** The table: the daemon's own rows around the tier settings every front end shares. */
    private static final SettingTable TABLE = SettingTable.of(List.of(BIND, PORT), TierSettings.ROWS, List.of(DATA_DIR, PROFILE,
            CACHE_DIR, PREFETCH_BYTES, ACCESS_KEY, SECRET_KEY, INSECURE, WRITE_BACK, MAX_HEADER_BYTES, MAX_XML_BYTES, MAX_OBJECT_BYTES,
            GROUP, SELF, GROUP_REFRESH, GROUP_PROBE, PEER_GRACE, SHARED_TIER, HEADER_TIMEOUT, MULTIPART_TTL, VIRTUAL_HOST, EVICTION_FOLLOWS,
            SCRATCH_BUCKET, SCRATCH_QUOTA, SCRATCH_TTL, DECODED));

    /** The keys a config file may hold, in the table's order. */
    public static final Set<String> KEYS = TABLE.keys();

    private final Settings values;

    private ServeConfig(Settings values) {
        this.values = values;
    }

    /** Every setting, in the table's order. */
    public static List<Setting<?>> settings() {
        return TABLE.rows();
    }

    /** Every setting at its default. */
    public static ServeConfig defaults() {
        return new ServeConfig(TABLE.defaults());
    }

    /** The values of the table, the tier settings among them. */
    @Override
    public Settings values() {
        return values;
    }

    // Accessors: typed views of the table's values (each row's description says what it means).

    public String bind() {
        return get(BIND);
    }

    public int port() {
        return get(PORT);
    }

    public Path dataDir() {
        return get(DATA_DIR);
    }

    public String profile() {
        return get(PROFILE);
    }

    public Path cacheDir() {
        return get(CACHE_DIR);
    }

    public long prefetchBytes() {
        return get(PREFETCH_BYTES);
    }

    /** The key clients sign with, or null (no signature checked). */
    public String accessKey() {
        return get(ACCESS_KEY);
    }

    public String secretKey() {
        return get(SECRET_KEY);
    }

    public boolean insecure() {
        return get(INSECURE);
    }

    public boolean writeBack() {
        return get(WRITE_BACK);
    }

    public int maxHeaderBytes() {
        return get(MAX_HEADER_BYTES);
    }

    public long maxXmlBytes() {
        return get(MAX_XML_BYTES);
    }

    public long maxObjectBytes() {
        return get(MAX_OBJECT_BYTES);
    }

    /** Where the regional group's members come from (null: no group). */
    public GroupSpec group() {
        return get(GROUP);
    }

    /** This daemon's URL in the group (null: found from this host's addresses and the daemon's port). */
    public URI self() {
        return get(SELF);
    }

    public Duration groupRefresh() {
        return get(GROUP_REFRESH);
    }

    public Duration groupProbe() {
        return get(GROUP_PROBE);
    }

    public Duration peerGrace() {
        return get(PEER_GRACE);
    }

    /** A shared file system's folder used as a tier in front of the origin, or null. */
    public Path sharedTier() {
        return get(SHARED_TIER);
    }

    public Duration headerTimeout() {
        return get(HEADER_TIMEOUT);
    }

    public Duration multipartTtl() {
        return get(MULTIPART_TTL);
    }

    public List<String> virtualHosts() {
        return get(VIRTUAL_HOST);
    }

    /** {@link #ALL_JOBS} or {@link #LAST_REPORT}. */
    public String evictionFollows() {
        return get(EVICTION_FOLLOWS);
    }

    /** A bucket kept on this node's disk only, never uploaded (null: none). */
    public String scratchBucket() {
        return get(SCRATCH_BUCKET);
    }

    public long scratchQuota() {
        return get(SCRATCH_QUOTA);
    }

    public Duration scratchTtl() {
        return get(SCRATCH_TTL);
    }

    @Override
    public double decodedShare() {
        return get(DECODED);
    }

    private static double share(String key, String v) {
        String t = v.trim();
        if (t.equals("auto")) {
            return Double.NaN;
        }
        if (t.equals("off")) {
            return 0;
        }
        try {
            double pct = Double.parseDouble(t.endsWith("%") ? t.substring(0, t.length() - 1) : "x");
            if (pct >= 0 && pct <= 100) {
                return pct / 100;
            }
        } catch (NumberFormatException e) {
            // the sentence below
        }
        throw new IllegalArgumentException(key + " must be auto, off or a share of the tier such as 50%, not '" + v + "'");
    }

    private static String shareText(double share) {
        return Double.isNaN(share) ? "auto" : share == 0 ? "off" : Math.round(share * 1000) / 10.0 + "%";
    }

    /** Checks what no single field can: a bind address beyond loopback needs credentials or --insecure. */
    public void validate() {
        if (upstream() != null && storeRoot() != null) {
            throw new IllegalArgumentException("give --upstream or --store-root, not both");
        }
        if (port() < 0 || port() > 65535) {
            throw new IllegalArgumentException("port must be 0 to 65535: " + port());
        }
        if ((accessKey() == null) != (secretKey() == null)) {
            throw new IllegalArgumentException("access-key and secret-key must be given together");
        }
        if (!isLoopback(bind()) && accessKey() == null && !insecure()) {
            throw new IllegalArgumentException("binding " + bind() + " exposes the daemon beyond this machine: configure "
                    + "credentials (access-key and secret-key, checked as AWS Signature V4) or pass --insecure");
        }
        TierSettings.validate(values);
        if (self() != null && group() == null) {
            throw new IllegalArgumentException("self (" + self() + ") needs a group");
        }
        if (self() != null && group() instanceof GroupSpec.Static s && !s.members().contains(self())) {
            throw new IllegalArgumentException("self (" + self() + ") must be one of the group's members: " + group().text());
        }
        if (groupRefresh().toMillis() < 100 || groupProbe().isNegative()) {
            throw new IllegalArgumentException("group-refresh must be at least 100ms and group-probe not negative: " + groupRefresh()
                    + ", " + groupProbe());
        }
        if (maxHeaderBytes() < 1024 || maxXmlBytes() < 1024 || maxObjectBytes() < 1) {
            throw new IllegalArgumentException("max-header-bytes and max-xml-bytes must be at least 1 KiB");
        }
        if (headerTimeout().isNegative() || headerTimeout().isZero()) {
            throw new IllegalArgumentException("header-timeout must be positive: " + headerTimeout());
        }
        if (multipartTtl().isNegative() || multipartTtl().isZero()) {
            throw new IllegalArgumentException("multipart-ttl must be positive: " + multipartTtl());
        }
        if (!evictionFollows().equals(ALL_JOBS) && !evictionFollows().equals(LAST_REPORT)) {
            throw new IllegalArgumentException("eviction-follows must be " + ALL_JOBS + " or " + LAST_REPORT + ", not '" + evictionFollows() + "'");
        }
        if (scratchQuota() < 1 || scratchTtl().isNegative() || scratchTtl().isZero()) {
            throw new IllegalArgumentException("scratch-quota and scratch-ttl must be positive: " + scratchQuota() + ", " + scratchTtl());
        }
        if (scratchBucket() != null) {
            try {
                ObjectKey.validateBucket(scratchBucket());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("scratch-bucket is not a valid bucket name: " + e.getMessage());
            }
        }
    }

    static boolean isLoopback(String bind) {
        return bind.equals("127.0.0.1") || bind.equals("localhost") || bind.equals("::1") || bind.startsWith("127.");
    }

    /** The settings as key/value text, as a config file would hold them (secrets hidden). */
    public Map<String, String> describe() {
        return values.describe();
    }

    /** Applies {@code key: value} settings (from a file or from flags) over this config. */
    public ServeConfig with(Map<String, String> settings) {
        return new ServeConfig(values.with(settings));
    }

    private <T> T get(Setting<T> s) {
        return values.get(s);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ServeConfig c && values.equals(c.values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    /** The settings as {@link #describe()} gives them: the secret key is not shown. */
    @Override
    public String toString() {
        return "ServeConfig" + describe();
    }

    /** Reads a YAML file of {@code key: value} lines (the keys of {@link #KEYS}). */
    public static Map<String, String> readFile(Path file) throws IOException {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(Files.readAllBytes(file));
        } catch (NoSuchFileException e) {
            throw new IOException(file + ": no such file");
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException(file + ": not valid YAML (" + e.getOriginalMessage() + ")");
        }
        Map<String, String> out = new LinkedHashMap<>();
        if (root == null || root.isNull()) {
            return out;
        }
        if (!root.isObject()) {
            throw new IOException(file + ": expected key: value settings");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!KEYS.contains(e.getKey())) {
                throw new IOException(file + ": unknown setting '" + e.getKey() + "'; known: " + String.join(", ", new TreeSet<>(KEYS)));
            }
            if (!e.getValue().isValueNode()) {
                throw new IOException(file + ": " + e.getKey() + " must be a single value");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }
}
