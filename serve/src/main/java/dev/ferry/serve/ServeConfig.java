package dev.ferry.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.ferry.cache.VerifyMode;
import dev.ferry.serve.membership.GroupSpec;
import dev.ferry.serve.node.NodeConfig;
import dev.ferry.serve.protocol.VirtualHosts;
import dev.ferry.store.ObjectKey;
import dev.ferry.util.Sizes;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Everything {@code ferry serve} is told, by flag or by YAML file: the two use the same keys (a flag
 * {@code --cache-size} is the key {@code cache-size}); flags win over the file. Defaults are pinned by
 * a test and listed in docs/configuration.md (a test checks the page against the table).
 *
 * <p>Design note: the settings are a table, one {@link Setting} per key, defined in one place below: its YAML
 * key (also the flag's name), its flag's parameter label or none, the default (as the page and a config file
 * write it), the codec that reads and prints it, and the one-line description (the flag's help). The
 * config file reader, {@link #describe()}, {@link #with(Map)} and {@code ferry serve}'s flags all walk the
 * table, so a new setting is a new row, plus an accessor if code reads it (and a rule in {@link #validate()}
 * if it needs one). As Kafka's {@code ConfigDef} and Iceberg's {@code S3FileIOProperties} keep keys, defaults and
 * docs together.
 *
 * <p>Immutable and thread-safe.
 */
public final class ServeConfig implements NodeConfig {

    /** {@code eviction-follows}: every registered job's future. */
    public static final String ALL_JOBS = NodeConfig.ALL_JOBS;
    /** {@code eviction-follows}: the plan of the job that reported last. */
    public static final String LAST_REPORT = NodeConfig.LAST_REPORT;

    // The table. Rows register themselves in order (TABLE must stay above them). A description that names a
    // default must name the row's (ServeConfigTest checks it).
    private static final List<Setting<?>> TABLE = new ArrayList<>();

    private static final Setting<String> BIND = flag("bind", "ADDR", Codec.TEXT, "127.0.0.1",
            "Address to listen on (default 127.0.0.1). Others need --access-key/--secret-key or --insecure.");
    private static final Setting<Integer> PORT = flag("port", "N", Codec.INT, "9099",
            "Port (default 9099; 0 picks a free one).");
    private static final Setting<URI> UPSTREAM = flag("upstream", "URL", Codec.URL, "",
            "S3 endpoint to front, e.g. https://s3.eu-west-1.amazonaws.com (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY).");
    private static final Setting<Path> STORE_ROOT = flag("store-root", "DIR", Codec.OPTIONAL_PATH, "",
            "A folder to use as the object store (buckets are subfolders).");
    private static final Setting<Path> DATA_DIR = flag("data-dir", "DIR", Codec.PATH, "~/.ferry/data",
            "The embedded store's folder (default ~/.ferry/data).");
    private static final Setting<String> PROFILE = flag("profile", "NAME", Codec.WORD, "cloud",
            "Embedded store profile: cloud (default) or none.");
    private static final Setting<Path> CACHE_DIR = flag("cache-dir", "DIR", Codec.PATH, "~/.ferry/cache",
            "The local tier's folder (default ~/.ferry/cache).");
    private static final Setting<Long> CACHE_SIZE = flag("cache-size", "SIZE", Codec.SIZE, "10GiB",
            "Local tier capacity, e.g. 500GiB (default 10GiB).");
    private static final Setting<Integer> BLOCK_SIZE = flag("block-size", "SIZE", Codec.INT_SIZE, "4MiB",
            "Cache block size (default 4MiB).");
    private static final Setting<VerifyMode> VERIFY = flag("verify", "WHEN", Codec.VERIFY, "on-load",
            "When a cached block is checked against its CRC32C before its bytes leave: on-load (default: unless they are "
                    + "provably the bytes last checked), always (every reply from a checked copy, no sendfile), or the opt-outs "
                    + "first-read and never, which serve a block corrupted on disk while the daemon runs.");
    private static final Setting<Long> PREFETCH_BYTES = flag("prefetch-bytes", "SIZE", Codec.SIZE, "256MiB",
            "At most this much prefetched ahead of a job's position; the depth follows time to need (default 256MiB).");
    private static final Setting<String> ACCESS_KEY = flag("access-key", "KEY", Codec.OPTIONAL_TEXT, "",
            "Access key clients sign with (AWS Signature V4); also FERRY_ACCESS_KEY.");
    private static final Setting<String> SECRET_KEY = flag("secret-key", "SECRET", Codec.SECRET, "",
            "Secret key; also FERRY_SECRET_KEY.");
    private static final Setting<Boolean> INSECURE = toggle("insecure",
            "Allow a non-loopback bind address without credentials (anyone reaching the port can use it).");
    private static final Setting<Boolean> WRITE_BACK = toggle("write-back",
            "Acknowledge PUTs once on local disk and upload them in the background.");
    private static final Setting<Long> WRITE_BACK_QUOTA = fileOnly("write-back-quota", Codec.SIZE, "8GiB",
            "Pending write-back bytes before PUTs fall back to write-through.");
    private static final Setting<Integer> MAX_HEADER_BYTES = fileOnly("max-header-bytes", Codec.INT_BYTES, "16384",
            "A request's line and headers, at most.");
    private static final Setting<Long> MAX_XML_BYTES = fileOnly("max-xml-bytes", Codec.SIZE, "1MiB",
            "An XML or JSON request body, at most.");
    private static final Setting<Long> MAX_OBJECT_BYTES = fileOnly("max-object-bytes", Codec.SIZE, "5GiB",
            "One PUT or one part, at most.");
    private static final Setting<GroupSpec> GROUP = flag("group", "URL,...|dns:NAME:PORT|etcd:URL/PREFIX", Codec.GROUP, "",
            "The regional group, each object read from the origin by its owner only: every member daemon's URL, "
                    + "comma-separated, in the same order on every node; or dns:NAME:PORT, the addresses of a DNS name (a "
                    + "headless Service), looked up every group-refresh; or etcd:http://HOST:2379/PREFIX, daemons registered "
                    + "under a key prefix in etcd.");
    private static final Setting<URI> SELF = flag("self", "URL", Codec.URL, "",
            "This daemon's URL in the group (default: the member on this daemon's port at one of this host's addresses; "
                    + "in an etcd group, the URL it registers: http://BIND:PORT, or this host's address with a wildcard bind).");
    private static final Setting<Duration> GROUP_REFRESH = flag("group-refresh", "DURATION", Codec.DURATION, "2s",
            "How often a dns: group's name is looked up again and an etcd: group's lease renewed (its TTL is five "
                    + "times this, at least 5 s), e.g. 2s (default).");
    private static final Setting<Duration> GROUP_PROBE = flag("group-probe", "DURATION", Codec.DURATION, "500ms",
            "How often every other group member is asked whether it answers; one that does not is skipped for the next "
                    + "owner of its objects (default: 500ms; 0 turns probing off).");
    private static final Setting<Path> SHARED_TIER = flag("shared-tier", "DIR", Codec.OPTIONAL_PATH, "",
            "A shared file system's folder, a tier between the group and the origin.");
    private static final Setting<Duration> FIRST_BYTE_TIMEOUT = flag("first-byte-timeout", "DURATION", Codec.DURATION, "10s",
            "How long a read waits for the object store to start answering, retries included, before the client gets "
                    + "503 ServiceUnavailable, e.g. 10s (default) or 500ms. Writes too: a DELETE's answer, a PUT's once the "
                    + "store stops taking its body.");
    private static final Setting<Duration> METADATA_TTL = flag("metadata-ttl", "DURATION", Codec.DURATION, "60s",
            "How long an object's size and ETag are trusted before a read asks the object store again (default 60s; 0: "
                    + "every read asks). A registered job's manifest versions are trusted while it is registered.");
    private static final Setting<Duration> HEADER_TIMEOUT = flag("header-timeout", "DURATION", Codec.DURATION, "30s",
            "How long a request's line and headers may take to arrive, from their first byte, before the connection is "
                    + "closed (default: 30s).");
    private static final Setting<Duration> MULTIPART_TTL = flag("multipart-ttl", "DURATION", Codec.DURATION, "7d",
            "How long an unfinished multipart upload is kept before its parts are deleted, e.g. 7d (default), 12h.");
    private static final Setting<List<String>> VIRTUAL_HOST = flag("virtual-host", "DOMAIN,...", Codec.DOMAINS, "localhost",
            "Domains under which a Host of bucket.DOMAIN is virtual-hosted-style addressing of that bucket "
                    + "(default: localhost; an empty value turns it off).");
    private static final Setting<String> EVICTION_FOLLOWS = flag("eviction-follows", "WHOSE", Codec.WORD, ALL_JOBS,
            "Whose plans eviction follows when several jobs are registered: all-jobs (default: every job's future, a block "
                    + "needed by any job is kept by the soonest use) or last-report (the job that reported progress last).");
    private static final Setting<String> SCRATCH_BUCKET = flag("scratch-bucket", "BUCKET", Codec.OPTIONAL_TEXT, "",
            "A bucket kept on this node's disk only and never uploaded (PUT, GET, LIST, DELETE work there against local disk).");
    private static final Setting<Long> SCRATCH_QUOTA = flag("scratch-quota", "SIZE", Codec.SIZE, "10GiB",
            "The scratch bucket's size at most; a write past it gets 507 InsufficientStorage (default: 10GiB).");
    private static final Setting<Duration> SCRATCH_TTL = flag("scratch-ttl", "DURATION", Codec.DURATION, "24h",
            "How long a scratch object lives after it was written (default: 24h).");

    private static final List<Setting<?>> SETTINGS = List.copyOf(TABLE);
    private static final Map<String, Setting<?>> BY_KEY = byKey();

    /** The keys a config file may hold, in the table's order. */
    public static final Set<String> KEYS = Collections.unmodifiableSet(new LinkedHashSet<>(BY_KEY.keySet()));

    private final Object[] values;

    private ServeConfig(Object[] values) {
        this.values = values;
    }

    /** Every setting, in the table's order. */
    public static List<Setting<?>> settings() {
        return SETTINGS;
    }

    /** Every setting at its default. */
    public static ServeConfig defaults() {
        Object[] v = new Object[SETTINGS.size()];
        for (Setting<?> s : SETTINGS) {
            v[s.index] = s.parse(s.defaultValueText());
        }
        return new ServeConfig(v);
    }

    // Accessors: typed views of the table's values (each row's description says what it means).

    public String bind() {
        return get(BIND);
    }

    public int port() {
        return get(PORT);
    }

    /** An S3 endpoint URL ({@code https://s3.us-east-1.amazonaws.com}), or null. */
    public URI upstream() {
        return get(UPSTREAM);
    }

    /** A folder used as the object store (buckets are its subfolders), or null. */
    public Path storeRoot() {
        return get(STORE_ROOT);
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

    public long cacheSize() {
        return get(CACHE_SIZE);
    }

    public int blockSize() {
        return get(BLOCK_SIZE);
    }

    /** When cached blocks are checked before their bytes leave. */
    public VerifyMode verify() {
        return get(VERIFY);
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

    public long writeBackQuota() {
        return get(WRITE_BACK_QUOTA);
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

    /** A shared file system's folder used as a tier in front of the origin, or null. */
    public Path sharedTier() {
        return get(SHARED_TIER);
    }

    public Duration firstByteTimeout() {
        return get(FIRST_BYTE_TIMEOUT);
    }

    @Override
    public Duration metadataTtl() {
        return get(METADATA_TTL);
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
        if (cacheSize() < 0 || prefetchBytes() < 0 || writeBackQuota() < 1) {
            throw new IllegalArgumentException("cache-size and prefetch-bytes must not be negative, write-back-quota must be positive");
        }
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
        if (metadataTtl().isNegative()) {
            throw new IllegalArgumentException("metadata-ttl must not be negative: " + metadataTtl());
        }
        if (firstByteTimeout().isNegative() || firstByteTimeout().isZero()) {
            throw new IllegalArgumentException("first-byte-timeout must be positive: " + firstByteTimeout());
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
        Map<String, String> m = new LinkedHashMap<>();
        for (Setting<?> s : SETTINGS) {
            m.put(s.key, s.format(values[s.index]));
        }
        return m;
    }

    /** Applies {@code key: value} settings (from a file or from flags) over this config. */
    public ServeConfig with(Map<String, String> settings) {
        Object[] v = values.clone();
        for (Map.Entry<String, String> e : settings.entrySet()) {
            Setting<?> s = BY_KEY.get(e.getKey());
            if (s == null) {
                throw new IllegalArgumentException("unknown setting '" + e.getKey() + "'; known: " + String.join(", ", new TreeSet<>(KEYS)));
            }
            try {
                v[s.index] = s.parse(e.getValue());
            } catch (NumberFormatException | ArithmeticException x) {
                throw new IllegalArgumentException(s.key + " must be a number (sizes may say 64MiB), not '" + e.getValue() + "'");
            }
        }
        return new ServeConfig(v);
    }

    @SuppressWarnings("unchecked")
    private <T> T get(Setting<T> s) {
        return (T) values[s.index];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ServeConfig c && Arrays.equals(values, c.values);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(values);
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

    /** A setting that is a flag taking a value ({@code --cache-size SIZE}) and a key of the file. */
    private static <T> Setting<T> flag(String key, String paramLabel, Codec<T> codec, String defaultText, String description) {
        return define(new Setting<>(key, paramLabel, true, codec, defaultText, description, TABLE.size()));
    }

    /** A setting that is a flag without a value ({@code --insecure}: true when given) and a key of the file; default false. */
    private static Setting<Boolean> toggle(String key, String description) {
        return define(new Setting<>(key, null, true, Codec.BOOL, "false", description, TABLE.size()));
    }

    /** A setting of the file only (limits not worth a flag). */
    private static <T> Setting<T> fileOnly(String key, Codec<T> codec, String defaultText, String description) {
        return define(new Setting<>(key, null, false, codec, defaultText, description, TABLE.size()));
    }

    private static <T> Setting<T> define(Setting<T> s) {
        TABLE.add(s);
        return s;
    }

    private static Map<String, Setting<?>> byKey() {
        Map<String, Setting<?>> m = new LinkedHashMap<>();
        for (Setting<?> s : SETTINGS) {
            if (m.put(s.key, s) != null) {
                throw new IllegalStateException("two settings named " + s.key);
            }
        }
        return Collections.unmodifiableMap(m);
    }

    /**
     * One row of the table: a key of the config file (and, unless {@link #isFlag()} is false, the flag
     * {@code --KEY}), its default as the file and docs/configuration.md write it, and its one-line description.
     * Immutable.
     */
    public static final class Setting<T> {
        private final String key;
        private final String paramLabel;
        private final boolean flag;
        private final Codec<T> codec;
        private final String defaultText;
        private final String description;
        private final int index;

        private Setting(String key, String paramLabel, boolean flag, Codec<T> codec, String defaultText, String description, int index) {
            this.key = key;
            this.paramLabel = paramLabel;
            this.flag = flag;
            this.codec = codec;
            this.defaultText = defaultText;
            this.description = description;
            this.index = index;
        }

        /** The key of the config file; the flag is {@code --} and this. */
        public String key() {
            return key;
        }

        /** Whether {@code ferry serve} has a flag for it ({@code --KEY}); false for keys of the file only. */
        public boolean isFlag() {
            return flag;
        }

        /** Whether the flag takes no value: given, it sets the setting to true. */
        public boolean isSwitch() {
            return flag && paramLabel == null;
        }

        /** What the flag's value is called in the help ({@code SIZE}); null for a switch or a key of the file only. */
        public String paramLabel() {
            return paramLabel;
        }

        /** The default as a config file would write it ({@code 10GiB}, {@code ~/.ferry/data}); empty: none. */
        public String defaultText() {
            return defaultText;
        }

        /** One line on what it does: the flag's help. */
        public String description() {
            return description;
        }

        /** The default text read as a value: {@code ~/} is the user's home (in defaults only, never in what users write). */
        private String defaultValueText() {
            return defaultText.startsWith("~/") ? Path.of(System.getProperty("user.home")).resolve(defaultText.substring(2)).toString()
                    : defaultText;
        }

        private T parse(String text) {
            return codec.parse().apply(key, text);
        }

        @SuppressWarnings("unchecked")
        private String format(Object value) {
            return value == null ? "" : codec.format().apply((T) value);
        }

        @Override
        public String toString() {
            return key;
        }
    }

    /** How a setting's text becomes its value (given the key, for messages) and back; an empty value means none where none is allowed. */
    private record Codec<T>(BiFunction<String, String, T> parse, Function<T, String> format) {
        static final Codec<String> TEXT = new Codec<>((k, v) -> v, s -> s);
        static final Codec<String> WORD = new Codec<>((k, v) -> v.trim(), s -> s);
        static final Codec<String> OPTIONAL_TEXT = new Codec<>((k, v) -> v.isBlank() ? null : v.trim(), s -> s);
        static final Codec<String> SECRET = new Codec<>((k, v) -> v.isBlank() ? null : v.trim(), s -> "(set)");
        static final Codec<Integer> INT = new Codec<>((k, v) -> Integer.parseInt(v.trim()), i -> Integer.toString(i));
        static final Codec<Long> SIZE = new Codec<>((k, v) -> Sizes.parse(v.trim()), Sizes::format);
        static final Codec<Integer> INT_SIZE = new Codec<>((k, v) -> Math.toIntExact(Sizes.parse(v.trim())), i -> Sizes.format(i));
        /** A size read as {@link #SIZE} reads it, printed as a plain number of bytes. */
        static final Codec<Integer> INT_BYTES = new Codec<>((k, v) -> Math.toIntExact(Sizes.parse(v.trim())), i -> Integer.toString(i));
        static final Codec<Boolean> BOOL = new Codec<>(ServeConfig::bool, b -> Boolean.toString(b));
        static final Codec<Duration> DURATION = new Codec<>(ServeConfig::duration, ServeConfig::format);
        static final Codec<Path> PATH = new Codec<>((k, v) -> Path.of(v.trim()), Path::toString);
        static final Codec<Path> OPTIONAL_PATH = new Codec<>((k, v) -> v.isBlank() ? null : Path.of(v.trim()), Path::toString);
        static final Codec<URI> URL = new Codec<>((k, v) -> v.isBlank() ? null : upstreamUri(v.trim()), URI::toString);
        static final Codec<GroupSpec> GROUP = new Codec<>((k, v) -> GroupSpec.parse(v), GroupSpec::text);
        static final Codec<List<String>> DOMAINS = new Codec<>((k, v) -> VirtualHosts.parse(v), l -> String.join(",", l));
        static final Codec<VerifyMode> VERIFY = new Codec<>((k, v) -> VerifyMode.parse(v), VerifyMode::settingName);
    }

    /** {@code 10s}, {@code 1500ms}, {@code 2m}, {@code 12h}, {@code 7d}; a bare number is seconds. */
    private static Duration duration(String key, String v) {
        Matcher m = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)?").matcher(v.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException(key + " must be a duration such as 10s, 500ms, 2m, 12h or 7d, not '" + v + "'");
        }
        double n = Double.parseDouble(m.group(1));
        double unit = switch (m.group(2) == null ? "s" : m.group(2)) {
            case "ms" -> 1;
            case "m" -> 60_000;
            case "h" -> 3_600_000;
            case "d" -> 86_400_000;
            default -> 1000;
        };
        return Duration.ofMillis(Math.round(n * unit));
    }

    /** A duration as {@link #duration} reads it, in the largest unit that holds it exactly. */
    private static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 86_400_000 == 0) {
            return ms / 86_400_000 + "d";
        }
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0 && ms >= 600_000) {
            return ms / 60_000 + "m";
        }
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }

    private static boolean bool(String key, String v) {
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on", "1" -> true;
            case "false", "no", "off", "0" -> false;
            default -> throw new IllegalArgumentException(key + " must be true or false, not '" + v + "'");
        };
    }

    private static URI upstreamUri(String v) {
        URI u = URI.create(v);
        if (u.getScheme() == null || !(u.getScheme().equals("http") || u.getScheme().equals("https")) || u.getHost() == null) {
            throw new IllegalArgumentException("upstream and self take http:// or https:// URLs, not '" + v + "'");
        }
        return u;
    }
}
