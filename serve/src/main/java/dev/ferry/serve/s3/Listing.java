package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.ContinuationTokens;
import dev.ferry.serve.protocol.ContinuationTokens.Resume;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.serve.protocol.Xml;
import dev.ferry.store.Checksum;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import dev.ferry.writeback.PendingKey;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listings: ListObjectsV2, ListObjects (v1) and ListObjectVersions. The stores behind ferry keep no
 * versions, so ListObjectVersions answers every object as its one version, {@code VersionId} "null" and
 * latest, as S3 does for a bucket that never had versioning on (test suites and tools clean buckets up
 * with it).
 *
 * <p>Under write-back a listing shows what was acknowledged, as S3 does: the writes not uploaded yet (or
 * failed, and served from local disk) are laid over the store's pages by name, with their size and ETag, and
 * a delete waiting behind them hides its key. They are taken before the store is listed, so a write whose
 * upload ends meanwhile is in one or the other, never in neither.
 *
 * <p>A page resumes from the store's token of the store page it ended in, skipping the names up to the last
 * one listed ({@link ContinuationTokens}); markers ({@code start-after}, v1 {@code marker}, {@code key-marker})
 * are where the store's first page starts, and names up to them are skipped. A delimiter the store refuses
 * (s3proxy takes only {@code /}) is grouped here over a listing without one, as S3 would group it. Thread-safe.
 */
final class Listing {
    static final int MAX_KEYS = 1000;
    static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final Logger LOG = LoggerFactory.getLogger(Listing.class);

    /** The keys whose latest acknowledged write or delete is not in the store yet ({@link dev.ferry.tier.LocalWrites#pendingIn}). */
    interface PendingSource {
        List<PendingKey> pendingIn(String bucket, String prefix);
    }

    private final java.util.function.Function<String, ObjectStore> stores;
    private final PendingSource pending;
    /** Set once the store refused a delimiter other than '/': such listings are grouped here from then on. */
    private volatile boolean storeRefusesDelimiters;

    /**
     * {@code stores}: the store each bucket is listed through (the scratch bucket's is local disk);
     * {@code pending}: the writes to lay over it.
     */
    Listing(java.util.function.Function<String, ObjectStore> stores, PendingSource pending) {
        this.stores = stores;
        this.pending = pending;
    }

    /**
     * One page of a listing, objects and common prefixes in key order, as S3 counts them together against
     * max-keys; when truncated, {@code next} says where the next page resumes and {@code lastSeen} is the
     * last name listed.
     */
    private record Page(List<ObjectMeta> objects, List<String> prefixes, boolean truncated, Resume next, String lastSeen) {
    }

    /** A name of a listing: an object ({@code meta}) or a common prefix (meta null). */
    private record Named(String name, ObjectMeta meta) {
    }

    // ---- ListObjectsV2 and ListObjects --------------------------------------------------------------

    Reply listObjects(S3Service.Request r) throws S3Error, IOException {
        boolean v2 = "2".equals(r.param("list-type"));
        if (r.has("list-type") && !v2) {
            throw S3Error.invalidArgument("list-type must be 2");
        }
        String prefix = r.param("prefix") == null ? "" : r.param("prefix");
        String delimiter = delimiter(r);
        int maxKeys = maxKeys(r);
        boolean url = urlEncoded(r);
        String token = v2 ? r.param("continuation-token") : null;
        String after = v2 ? r.param("start-after") : r.param("marker");
        // v1 names each object's owner; v2 only when asked (fetch-owner=true)
        boolean owner = !v2 || "true".equals(r.param("fetch-owner"));
        Resume from = new Resume(null, after == null || after.isEmpty() ? null : after, false);
        // an empty token is no token (S3 lists from the start and echoes it): what a paginator's first call may send
        if (token != null && !token.isEmpty()) {
            Resume t = ContinuationTokens.parse(token);
            String skip = t.after() == null || (after != null && after.compareTo(t.after()) > 0) ? from.after() : t.after();
            from = new Resume(t.storeToken(), skip, t.ferryGroups());
        }
        Page page = collect(r.bucket(), prefix, delimiter, from, maxKeys);
        String nextToken = page.truncated() ? ContinuationTokens.of(page.next()) : null;
        Xml x = new Xml().openRoot("ListBucketResult").element("Name", r.bucket()).element("Prefix", enc(prefix, url))
                .element("MaxKeys", maxKeys).element("Delimiter", delimiter == null ? null : enc(delimiter, url))
                .element("IsTruncated", page.truncated());
        if (url) {
            x.element("EncodingType", "url");
        }
        if (v2) {
            x.element("KeyCount", page.objects().size() + page.prefixes().size()).element("ContinuationToken", token)
                    .element("NextContinuationToken", nextToken)
                    .element("StartAfter", r.param("start-after") == null ? null : enc(r.param("start-after"), url));
        } else {
            x.element("Marker", after == null ? "" : enc(after, url));
            if (page.truncated()) {
                x.element("NextMarker", enc(page.lastSeen(), url));
            }
        }
        for (ObjectMeta o : page.objects()) {
            x.open("Contents").element("Key", enc(o.key().key(), url)).element("LastModified", ISO.format(o.lastModified()))
                    .element("ETag", S3Service.quote(o.etag()));
            checksumAlgorithm(x, o);
            x.element("Size", o.size()).element("StorageClass", "STANDARD");
            if (owner) {
                S3Service.owner(x, "Owner");
            }
            x.close("Contents");
        }
        prefixes(x, page, url);
        return Reply.xml(HttpResponseStatus.OK, x.close("ListBucketResult"));
    }

    // ---- ListObjectVersions -------------------------------------------------------------------------

    /** {@code GET /b?versions}: each object as its single version "null"; prefix, delimiter, key-marker, max-keys. */
    Reply listVersions(S3Service.Request r) throws S3Error, IOException {
        String prefix = r.param("prefix") == null ? "" : r.param("prefix");
        String delimiter = delimiter(r);
        int maxKeys = maxKeys(r);
        boolean url = urlEncoded(r);
        String keyMarker = r.param("key-marker");
        if (keyMarker != null && keyMarker.isEmpty()) {
            keyMarker = null;
        }
        String versionMarker = r.param("version-id-marker");
        if (versionMarker != null && !versionMarker.isEmpty()) {
            if (keyMarker == null) {
                throw S3Error.invalidArgument("version-id-marker needs a key-marker");
            }
            if (!versionMarker.equals("null")) {
                throw S3Error.invalidArgument("version-id-marker must be 'null': ferry's objects have one version each, 'null'");
            }
        }
        // one version per key: "after key-marker's version null" is "after key-marker"
        Page page = collect(r.bucket(), prefix, delimiter, new Resume(null, keyMarker, false), maxKeys);
        Xml x = new Xml().openRoot("ListVersionsResult").element("Name", r.bucket()).element("Prefix", enc(prefix, url))
                .element("KeyMarker", keyMarker == null ? "" : enc(keyMarker, url))
                .element("VersionIdMarker", versionMarker == null ? "" : versionMarker);
        if (page.truncated()) {
            boolean endsWithPrefix = !page.prefixes().isEmpty() && page.prefixes().getLast().equals(page.lastSeen());
            x.element("NextKeyMarker", enc(page.lastSeen(), url)).element("NextVersionIdMarker", endsWithPrefix ? null : "null");
        }
        x.element("MaxKeys", maxKeys).element("Delimiter", delimiter == null ? null : enc(delimiter, url))
                .element("IsTruncated", page.truncated());
        if (url) {
            x.element("EncodingType", "url");
        }
        for (ObjectMeta o : page.objects()) {
            x.open("Version").element("Key", enc(o.key().key(), url)).element("VersionId", "null").element("IsLatest", true)
                    .element("LastModified", ISO.format(o.lastModified())).element("ETag", S3Service.quote(o.etag()));
            checksumAlgorithm(x, o);
            x.element("Size", o.size()).element("StorageClass", "STANDARD");
            S3Service.owner(x, "Owner");
            x.close("Version");
        }
        prefixes(x, page, url);
        return Reply.xml(HttpResponseStatus.OK, x.close("ListVersionsResult"));
    }

    // ---- shared -------------------------------------------------------------------------------------

    /**
     * Collects one page of at most {@code maxKeys} names after {@code from.after()}: the store's pages from
     * {@code from.storeToken()} (several when the names wanted span them), rolled up at the delimiter, with the
     * writes not uploaded yet laid over them. A pending name is listed only once the store's pages have
     * reached it, so the store's names and the pending ones come out in one order.
     */
    private Page collect(String bucket, String prefix, String delimiter, Resume from, int maxKeys) throws IOException {
        List<ObjectMeta> objects = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        if (maxKeys == 0) {
            return new Page(objects, prefixes, false, null, null);
        }
        // taken before the store is listed: a write uploaded meanwhile is then in one or the other (or both)
        Local local = new Local(pending.pendingIn(bucket, prefix), prefix, delimiter);
        ObjectStore store = stores.apply(bucket);
        boolean ferryGroups = delimiter != null && (from.storeToken() != null ? from.ferryGroups()
                : storeRefusesDelimiters && !delimiter.equals("/"));
        String token = from.storeToken();
        String after = from.after();
        String lastSeen = null;
        while (true) {
            ListPage page;
            try {
                // the store's first page begins at the marker: a listing from the middle of a large bucket does
                // not page through all that comes before it (names at or before it are skipped here all the same)
                page = store.list(new ListRequest(bucket, prefix, ferryGroups ? null : delimiter, token, MAX_KEYS,
                        token == null ? after : null));
            } catch (StoreException e) {
                if (ferryGroups || delimiter == null || delimiter.equals("/") || token != null || e.httpStatus() != 400) {
                    throw e;
                }
                if (!storeRefusesDelimiters) {
                    LOG.info("the store refused the delimiter '{}' ({}); listings with a delimiter other than '/' are grouped by ferry",
                            delimiter, e.getMessage());
                }
                storeRefusesDelimiters = true;
                ferryGroups = true;
                continue;
            }
            TreeMap<String, Named> names = new TreeMap<>();
            String end = storeNames(bucket, page, prefix, delimiter, ferryGroups, local, names);
            boolean more = page.isTruncated();
            if (!more || end != null) { // the pending names the store's pages have reached
                java.util.NavigableMap<String, Named> reached = local.names;
                if (after != null) {
                    reached = reached.tailMap(after, false);
                }
                if (more) {
                    reached = reached.headMap(end, true);
                }
                reached.forEach(names::putIfAbsent);
            }
            for (Named n : (after == null ? names : names.tailMap(after, false)).values()) {
                if (objects.size() + prefixes.size() == maxKeys) {
                    return new Page(objects, prefixes, true, new Resume(token, lastSeen, ferryGroups), lastSeen);
                }
                if (n.meta() != null) {
                    objects.add(n.meta());
                } else {
                    prefixes.add(n.name());
                }
                lastSeen = n.name();
            }
            after = lastSeen != null ? lastSeen : after;
            if (!more) {
                return new Page(objects, prefixes, false, null, lastSeen);
            }
            token = page.nextToken();
            if (objects.size() + prefixes.size() == maxKeys) {
                return new Page(objects, prefixes, true, new Resume(token, lastSeen, ferryGroups), lastSeen);
            }
        }
    }

    /**
     * The names of one store page with the pending writes laid over them (a pending write's metadata for its
     * key; a pending delete's key left out) into {@code out}; returns the last name the page reached (null when
     * it had none).
     */
    private String storeNames(String bucket, ListPage page, String prefix, String delimiter, boolean ferryGroups, Local local,
            TreeMap<String, Named> out) throws IOException {
        String end = null;
        for (ObjectMeta o : page.objects()) {
            String key = o.key().key();
            int cut = ferryGroups ? cut(key, prefix, delimiter) : -1;
            String name = cut < 0 ? key : key.substring(0, cut);
            end = end == null || name.compareTo(end) > 0 ? name : end;
            if (local.byKey.containsKey(key)) {
                o = local.byKey.get(key);
                if (o == null) {
                    continue; // deleted, the store not told yet
                }
            }
            out.put(name, new Named(name, cut < 0 ? o : null));
        }
        for (String p : page.commonPrefixes()) {
            end = end == null || p.compareTo(end) > 0 ? p : end;
            java.util.Set<String> deleted = local.deletesUnder.get(p);
            if (deleted != null && !local.names.containsKey(p) && !holdsOtherThan(bucket, p, deleted)) {
                continue; // every key under it is deleted, the store not told yet
            }
            out.put(p, new Named(p, null));
        }
        return end;
    }

    /** Whether the store holds a key under {@code prefix} other than {@code deleted}. */
    private boolean holdsOtherThan(String bucket, String prefix, java.util.Set<String> deleted) throws IOException {
        ListRequest request = new ListRequest(bucket, prefix, null, null, Math.min(MAX_KEYS, deleted.size() + 1));
        while (true) {
            ListPage page = stores.apply(bucket).list(request);
            for (ObjectMeta o : page.objects()) {
                if (!deleted.contains(o.key().key())) {
                    return true;
                }
            }
            if (!page.isTruncated()) {
                return false;
            }
            request = request.withContinuationToken(page.nextToken());
        }
    }

    /**
     * Where S3 cuts {@code key} into a common prefix: after the first {@code delimiter} that follows {@code prefix};
     * -1 when it lists the key as an object.
     */
    private static int cut(String key, String prefix, String delimiter) {
        int d = delimiter == null ? -1 : key.indexOf(delimiter, prefix.length());
        return d < 0 ? -1 : d + delimiter.length();
    }

    /** The pending writes and deletes of a listing's prefix, by key and as the names they list as. */
    private static final class Local {
        /** Key to the pending write's metadata, or null for a pending delete. */
        final java.util.Map<String, ObjectMeta> byKey = new java.util.HashMap<>();
        /** The names the pending writes list as: objects, and the common prefixes they roll up to. */
        final TreeMap<String, Named> names = new TreeMap<>();
        /** Common prefix to the keys under it deleted and not yet in the store. */
        final java.util.Map<String, java.util.Set<String>> deletesUnder = new java.util.HashMap<>();

        Local(List<PendingKey> pending, String prefix, String delimiter) {
            for (PendingKey p : pending) {
                byKey.put(p.key(), p.meta());
                int cut = cut(p.key(), prefix, delimiter);
                String name = cut < 0 ? p.key() : p.key().substring(0, cut);
                if (p.meta() != null) {
                    names.put(name, new Named(name, cut < 0 ? p.meta() : null));
                } else if (cut >= 0) {
                    deletesUnder.computeIfAbsent(name, n -> new java.util.HashSet<>()).add(p.key());
                }
            }
        }
    }

    /** {@code <ChecksumAlgorithm>} and {@code <ChecksumType>} of an object that keeps a checksum (as S3 lists them). */
    private static void checksumAlgorithm(Xml x, ObjectMeta o) {
        Checksum c = Checksum.of(o.attributes());
        if (c == null) {
            c = Checksum.declaredIn(o.attributes()); // a store that lists only the algorithm (S3)
        }
        if (c != null) {
            x.element("ChecksumAlgorithm", c.algorithm().name()).element("ChecksumType", c.type().name());
        }
    }

    private static void prefixes(Xml x, Page page, boolean url) {
        for (String p : page.prefixes()) {
            x.open("CommonPrefixes").element("Prefix", enc(p, url)).close("CommonPrefixes");
        }
    }

    private static String delimiter(S3Service.Request r) {
        String delimiter = r.param("delimiter");
        return delimiter == null || delimiter.isEmpty() ? null : delimiter;
    }

    private static int maxKeys(S3Service.Request r) throws S3Error {
        String text = r.param("max-keys");
        if (text == null) {
            return MAX_KEYS;
        }
        int maxKeys;
        try {
            maxKeys = Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw S3Error.invalidArgument("max-keys must be a number, not '" + text + "'");
        }
        if (maxKeys < 0) {
            throw S3Error.invalidArgument("max-keys must not be negative: " + maxKeys);
        }
        return Math.min(maxKeys, MAX_KEYS);
    }

    private static boolean urlEncoded(S3Service.Request r) throws S3Error {
        String encoding = r.param("encoding-type");
        if (encoding != null && !encoding.equals("url")) {
            throw S3Error.invalidArgument("encoding-type must be url, not '" + encoding + "'");
        }
        return encoding != null;
    }

    private static String enc(String s, boolean url) {
        return url ? Uris.encode(s, false) : s;
    }
}
