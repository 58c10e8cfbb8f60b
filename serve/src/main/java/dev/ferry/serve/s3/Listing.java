package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.ContinuationTokens;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.serve.protocol.Xml;
import dev.ferry.store.Checksum;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * The listings: ListObjectsV2, ListObjects (v1) and ListObjectVersions. The stores behind ferry keep no
 * versions, so ListObjectVersions answers every object as its one version, {@code VersionId} "null" and
 * latest, as S3 does for a bucket that never had versioning on (test suites and tools clean buckets up
 * with it).
 *
 * <p>Markers ({@code start-after}, v1 {@code marker}, {@code key-marker}) are served by skipping keys of
 * the store's pages: the store API takes only its own continuation tokens. Thread-safe.
 */
final class Listing {
    static final int MAX_KEYS = 1000;
    static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private final java.util.function.Function<String, ObjectStore> stores;

    /** {@code stores}: the store each bucket is listed through (the scratch bucket's is local disk). */
    Listing(java.util.function.Function<String, ObjectStore> stores) {
        this.stores = stores;
    }

    /**
     * One page of a listing, objects and common prefixes in key order, as S3 counts them together against
     * max-keys. {@code storeToken} is the store's token to resume at when the page ended with the store's;
     * otherwise a next page resumes after {@code lastSeen}.
     */
    private record Page(List<ObjectMeta> objects, List<String> prefixes, boolean truncated, String storeToken, String lastSeen) {
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
        // an empty token is no token (S3 lists from the start and echoes it): what a paginator's first call may send
        String storeToken = token == null || token.isEmpty() ? null : token;
        // v1 names each object's owner; v2 only when asked (fetch-owner=true)
        boolean owner = !v2 || "true".equals(r.param("fetch-owner"));
        String resumeAfter = ContinuationTokens.parse(storeToken);
        if (resumeAfter != null) {
            storeToken = null;
            after = after == null || resumeAfter.compareTo(after) > 0 ? resumeAfter : after;
        }
        Page page = collect(r.bucket(), prefix, delimiter, storeToken, after, maxKeys);
        // A continuation token the store gave resumes exactly; otherwise resume after the last key listed.
        String nextToken = page.truncated() ? (page.storeToken() != null ? page.storeToken() : ContinuationTokens.after(page.lastSeen())) : null;
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
        Page page = collect(r.bucket(), prefix, delimiter, null, keyMarker, maxKeys);
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
     * Collects one page: the store's pages from {@code storeToken} (or the start), skipping names up to
     * {@code after}; a page may need several of the store's pages.
     */
    private Page collect(String bucket, String prefix, String delimiter, String storeToken, String after, int maxKeys)
            throws IOException {
        List<ObjectMeta> objects = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        String next = storeToken;
        boolean truncated = false;
        String lastSeen = null;
        while (maxKeys > 0) {
            ListPage page = stores.apply(bucket).list(new ListRequest(bucket, prefix, delimiter, next, MAX_KEYS));
            List<String> pagePrefixes = page.commonPrefixes();
            List<ObjectMeta> pageObjects = page.objects();
            int pi = 0;
            int oi = 0;
            while ((oi < pageObjects.size() || pi < pagePrefixes.size()) && objects.size() + prefixes.size() < maxKeys) {
                boolean takeObject = pi >= pagePrefixes.size()
                        || (oi < pageObjects.size() && pageObjects.get(oi).key().key().compareTo(pagePrefixes.get(pi)) < 0);
                String name = takeObject ? pageObjects.get(oi).key().key() : pagePrefixes.get(pi);
                if (after == null || name.compareTo(after) > 0) {
                    if (takeObject) {
                        objects.add(pageObjects.get(oi));
                    } else {
                        prefixes.add(name);
                    }
                }
                lastSeen = name;
                if (takeObject) {
                    oi++;
                } else {
                    pi++;
                }
            }
            if (oi < pageObjects.size() || pi < pagePrefixes.size()) {
                truncated = true;
                next = null; // resume after lastSeen
                break;
            }
            if (!page.isTruncated()) {
                break;
            }
            next = page.nextToken();
            if (objects.size() + prefixes.size() >= maxKeys) {
                truncated = true;
                break;
            }
        }
        return new Page(objects, prefixes, truncated, truncated ? next : null, lastSeen);
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
