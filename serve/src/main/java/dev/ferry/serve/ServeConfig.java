package dev.ferry.serve;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.ferry.store.ObjectKey;
import dev.ferry.util.Sizes;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Everything {@code ferry serve} is told, by flag or by YAML file: the two use the same keys (a flag
 * {@code --cache-size} is the key {@code cache-size}); flags win over the file. Defaults are pinned by
 * a test and listed in docs/configuration.md.
 *
 * @param upstream    an S3 endpoint URL ({@code https://s3.us-east-1.amazonaws.com}), or null
 * @param storeRoot   a folder used as the object store (buckets are its subfolders), or null
 * @param dataDir     with neither, the embedded store's folder (served with {@code profile})
 * @param writeBack   PUTs are acknowledged once on local disk and uploaded in the background
 * @param group       the regional group's daemons (empty: none); each object is read through its owner
 * @param self        this daemon's URL as the group lists it (null: a client of the group, not a member)
 * @param sharedTier  a shared file system's folder used as a tier in front of the origin, or null
 * @param firstByteTimeout how long a read waits for the object store to start answering, retries included,
 *                    before the client gets {@code 503 ServiceUnavailable}
 * @param headerTimeout how long a request's line and headers may take to arrive, from their first byte
 * @param multipartTtl how long a multipart upload started and never completed or aborted is kept before its
 *                    parts are deleted (uploads the daemon holds: write-back's, a folder store's)
 * @param virtualHosts domains under which {@code bucket.DOMAIN} is served as virtual-hosted-style
 *                    addressing (default {@code localhost}: {@code http://bucket.localhost:9099/key})
 * @param evictionFollows whose plans eviction follows with several jobs: {@code all-jobs} (every registered
 *                    job's future, a block's next use the soonest over them) or {@code last-report} (the plan of
 *                    the job that reported progress last, as before several jobs were planned together)
 * @param scratchBucket a bucket kept on this node's disk only, never uploaded (null: none)
 * @param scratchQuota the scratch bucket's bytes at most; a write past it is refused with 507
 * @param scratchTtl  how long a scratch object lives after it was written
 */
public record ServeConfig(
        String bind,
        int port,
        URI upstream,
        Path storeRoot,
        Path dataDir,
        String profile,
        Path cacheDir,
        long cacheSize,
        int blockSize,
        long prefetchBytes,
        String accessKey,
        String secretKey,
        boolean insecure,
        boolean writeBack,
        long writeBackQuota,
        int maxHeaderBytes,
        long maxXmlBytes,
        long maxObjectBytes,
        List<URI> group,
        URI self,
        Path sharedTier,
        Duration firstByteTimeout,
        Duration headerTimeout,
        Duration multipartTtl,
        List<String> virtualHosts,
        String evictionFollows,
        String scratchBucket,
        long scratchQuota,
        Duration scratchTtl) {

    /** {@code eviction-follows}: every registered job's future. */
    public static final String ALL_JOBS = "all-jobs";
    /** {@code eviction-follows}: the plan of the job that reported last. */
    public static final String LAST_REPORT = "last-report";

    /** The keys a config file may hold. */
    public static final Set<String> KEYS = Set.of("bind", "port", "upstream", "store-root", "data-dir", "profile", "cache-dir",
            "cache-size", "block-size", "prefetch-bytes", "access-key", "secret-key", "insecure", "write-back", "write-back-quota",
            "max-header-bytes", "max-xml-bytes", "max-object-bytes", "group", "self", "shared-tier", "first-byte-timeout", "header-timeout",
            "multipart-ttl", "virtual-host",
            "eviction-follows", "scratch-bucket", "scratch-quota", "scratch-ttl");

    public static ServeConfig defaults() {
        Path home = Path.of(System.getProperty("user.home"), ".ferry");
        return new ServeConfig("127.0.0.1", 9099, null, null, home.resolve("data"), "cloud", home.resolve("cache"), 10L << 30,
                4 << 20, 256L << 20, null, null, false, false, 8L << 30, 16 * 1024, 1L << 20, 5L << 30, List.of(), null, null,
                Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofDays(7),
                List.of("localhost"), ALL_JOBS, null, 10L << 30, Duration.ofHours(24));
    }

    /** Checks what no single field can: a bind address beyond loopback needs credentials or --insecure. */
    public void validate() {
        if (upstream != null && storeRoot != null) {
            throw new IllegalArgumentException("give --upstream or --store-root, not both");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0 to 65535: " + port);
        }
        if ((accessKey == null) != (secretKey == null)) {
            throw new IllegalArgumentException("access-key and secret-key must be given together");
        }
        if (!isLoopback(bind) && accessKey == null && !insecure) {
            throw new IllegalArgumentException("binding " + bind + " exposes the daemon beyond this machine: configure "
                    + "credentials (access-key and secret-key, checked as AWS Signature V4) or pass --insecure");
        }
        if (cacheSize < 0 || prefetchBytes < 0 || writeBackQuota < 1) {
            throw new IllegalArgumentException("cache-size and prefetch-bytes must not be negative, write-back-quota must be positive");
        }
        if (self != null && !group.contains(self)) {
            throw new IllegalArgumentException("self (" + self + ") must be one of the group's members: " + group);
        }
        if (!group.isEmpty() && new HashSet<>(group).size() != group.size()) {
            throw new IllegalArgumentException("the group lists a member twice: " + group);
        }
        if (firstByteTimeout.isNegative() || firstByteTimeout.isZero()) {
            throw new IllegalArgumentException("first-byte-timeout must be positive: " + firstByteTimeout);
        }
        if (maxHeaderBytes < 1024 || maxXmlBytes < 1024 || maxObjectBytes < 1) {
            throw new IllegalArgumentException("max-header-bytes and max-xml-bytes must be at least 1 KiB");
        }
        if (headerTimeout.isNegative() || headerTimeout.isZero()) {
            throw new IllegalArgumentException("header-timeout must be positive: " + headerTimeout);
        }
        if (multipartTtl.isNegative() || multipartTtl.isZero()) {
            throw new IllegalArgumentException("multipart-ttl must be positive: " + multipartTtl);
        }
        if (!evictionFollows.equals(ALL_JOBS) && !evictionFollows.equals(LAST_REPORT)) {
            throw new IllegalArgumentException("eviction-follows must be " + ALL_JOBS + " or " + LAST_REPORT + ", not '" + evictionFollows + "'");
        }
        if (scratchQuota < 1 || scratchTtl.isNegative() || scratchTtl.isZero()) {
            throw new IllegalArgumentException("scratch-quota and scratch-ttl must be positive: " + scratchQuota + ", " + scratchTtl);
        }
        if (scratchBucket != null) {
            try {
                ObjectKey.validateBucket(scratchBucket);
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
        m.put("bind", bind);
        m.put("port", Integer.toString(port));
        m.put("upstream", upstream == null ? "" : upstream.toString());
        m.put("store-root", storeRoot == null ? "" : storeRoot.toString());
        m.put("data-dir", dataDir.toString());
        m.put("profile", profile);
        m.put("cache-dir", cacheDir.toString());
        m.put("cache-size", Sizes.format(cacheSize));
        m.put("block-size", Sizes.format(blockSize));
        m.put("prefetch-bytes", Sizes.format(prefetchBytes));
        m.put("access-key", accessKey == null ? "" : accessKey);
        m.put("secret-key", secretKey == null ? "" : "(set)");
        m.put("insecure", Boolean.toString(insecure));
        m.put("write-back", Boolean.toString(writeBack));
        m.put("write-back-quota", Sizes.format(writeBackQuota));
        m.put("max-header-bytes", Integer.toString(maxHeaderBytes));
        m.put("max-xml-bytes", Sizes.format(maxXmlBytes));
        m.put("max-object-bytes", Sizes.format(maxObjectBytes));
        m.put("group", String.join(",", group.stream().map(URI::toString).toList()));
        m.put("self", self == null ? "" : self.toString());
        m.put("shared-tier", sharedTier == null ? "" : sharedTier.toString());
        m.put("first-byte-timeout", format(firstByteTimeout));
        m.put("header-timeout", format(headerTimeout));
        m.put("multipart-ttl", format(multipartTtl));
        m.put("virtual-host", String.join(",", virtualHosts));
        m.put("eviction-follows", evictionFollows);
        m.put("scratch-bucket", scratchBucket == null ? "" : scratchBucket);
        m.put("scratch-quota", Sizes.format(scratchQuota));
        m.put("scratch-ttl", format(scratchTtl));
        return m;
    }

    /** Applies {@code key: value} settings (from a file or from flags) over this config. */
    public ServeConfig with(Map<String, String> settings) {
        ServeConfig c = this;
        for (Map.Entry<String, String> e : settings.entrySet()) {
            c = c.with(e.getKey(), e.getValue());
        }
        return c;
    }

    private ServeConfig with(String key, String v) {
        String b = bind;
        int p = port;
        URI up = upstream;
        Path root = storeRoot;
        Path data = dataDir;
        String prof = profile;
        Path cd = cacheDir;
        long cs = cacheSize;
        int bs = blockSize;
        long pf = prefetchBytes;
        String ak = accessKey;
        String sk = secretKey;
        boolean ins = insecure;
        boolean wb = writeBack;
        long wbq = writeBackQuota;
        int mh = maxHeaderBytes;
        long mx = maxXmlBytes;
        long mo = maxObjectBytes;
        List<URI> g = group;
        URI me = self;
        Path shared = sharedTier;
        Duration fbt = firstByteTimeout;
        Duration ht = headerTimeout;
        Duration mpt = multipartTtl;
        List<String> vh = virtualHosts;
        String ef = evictionFollows;
        String sb = scratchBucket;
        long sq = scratchQuota;
        Duration st = scratchTtl;
        try {
            switch (key) {
                case "bind" -> b = v;
                case "port" -> p = Integer.parseInt(v.trim());
                case "upstream" -> up = v.isBlank() ? null : upstreamUri(v.trim());
                case "store-root" -> root = v.isBlank() ? null : Path.of(v.trim());
                case "data-dir" -> data = Path.of(v.trim());
                case "profile" -> prof = v.trim();
                case "cache-dir" -> cd = Path.of(v.trim());
                case "cache-size" -> cs = Sizes.parse(v.trim());
                case "block-size" -> bs = Math.toIntExact(Sizes.parse(v.trim()));
                case "prefetch-bytes" -> pf = Sizes.parse(v.trim());
                case "access-key" -> ak = v.isBlank() ? null : v.trim();
                case "secret-key" -> sk = v.isBlank() ? null : v.trim();
                case "insecure" -> ins = bool(key, v);
                case "write-back" -> wb = bool(key, v);
                case "write-back-quota" -> wbq = Sizes.parse(v.trim());
                case "max-header-bytes" -> mh = Math.toIntExact(Sizes.parse(v.trim()));
                case "max-xml-bytes" -> mx = Sizes.parse(v.trim());
                case "max-object-bytes" -> mo = Sizes.parse(v.trim());
                case "group" -> {
                    List<URI> members = new ArrayList<>();
                    for (String u : v.split(",")) {
                        if (!u.isBlank()) {
                            members.add(upstreamUri(u.trim()));
                        }
                    }
                    g = List.copyOf(members);
                }
                case "self" -> me = v.isBlank() ? null : upstreamUri(v.trim());
                case "shared-tier" -> shared = v.isBlank() ? null : Path.of(v.trim());
                case "first-byte-timeout" -> fbt = duration(key, v);
                case "header-timeout" -> ht = duration(key, v);
                case "multipart-ttl" -> mpt = duration(key, v);
                case "virtual-host" -> vh = VirtualHosts.parse(v);
                case "eviction-follows" -> ef = v.trim();
                case "scratch-bucket" -> sb = v.isBlank() ? null : v.trim();
                case "scratch-quota" -> sq = Sizes.parse(v.trim());
                case "scratch-ttl" -> st = duration(key, v);
                default -> throw new IllegalArgumentException("unknown setting '" + key + "'; known: " + String.join(", ", new TreeSet<>(KEYS)));
            }
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(key + " must be a number (sizes may say 64MiB), not '" + v + "'");
        }
        return new ServeConfig(b, p, up, root, data, prof, cd, cs, bs, pf, ak, sk, ins, wb, wbq, mh, mx, mo, g, me, shared, fbt, ht, mpt, vh, ef, sb, sq, st);
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
            throw new IllegalArgumentException("upstream, group and self take http:// or https:// URLs, not '" + v + "'");
        }
        return u;
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
