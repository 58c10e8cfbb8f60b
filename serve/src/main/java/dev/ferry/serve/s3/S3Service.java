package dev.ferry.serve.s3;

import dev.ferry.cache.CachingStore;
import dev.ferry.serve.node.LocalMultipart;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.protocol.ContinuationTokens;
import dev.ferry.serve.protocol.Keys;
import dev.ferry.serve.protocol.ObjectHeaders;
import dev.ferry.serve.protocol.Ranges;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.RequestBody;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.serve.protocol.Xml;
import dev.ferry.store.BucketOperations;
import dev.ferry.store.ByteRange;
import dev.ferry.store.Checksum;
import dev.ferry.store.CompletedPart;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListRequest;
import dev.ferry.store.MultipartOperations;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PartRanges;
import dev.ferry.store.Parts;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import dev.ferry.writeback.Durability;
import dev.ferry.writeback.WriteBackStore;
import dev.ferry.writeback.WriteStatus;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.w3c.dom.Element;

/**
 * The S3 operations, blocking, on a request whose body (if any) has been received and checked. Reads go
 * through the local tier ({@link CachingStore}); writes go through it to the object store and drop the
 * key's cached blocks. Thread-safe.
 */
public final class S3Service {
    /** The version id of every object: the stores behind ferry keep one version, as an unversioned S3 bucket. */
    static final String NULL_VERSION = "null";
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);
    /** The one owner ferry answers for every bucket and object (it has no accounts): ID and display name. */
    static final String OWNER = "ferry";

    /** {@code <element><ID>ferry</ID><DisplayName>ferry</DisplayName></element>}. */
    static Xml owner(Xml x, String element) {
        return x.open(element).element("ID", OWNER).element("DisplayName", OWNER).close(element);
    }

    /** A request the daemon has parsed: bucket and key decoded and checked, query decoded. */
    public record Request(HttpMethod method, String bucket, String key, Map<String, List<String>> query, HttpHeaders headers,
            RequestBody body) {
        String param(String name) {
            List<String> v = query.get(name);
            return v == null || v.isEmpty() ? null : v.get(0);
        }

        boolean has(String name) {
            return query.containsKey(name);
        }
    }

    private final CachingStore cache;
    private final BucketOperations buckets;
    private final WriteBackStore writeBack;
    private final LocalMultipart localMultipart;
    private final ObjectStore front;
    /** Multipart uploads go to the top of the stack, as other writes (the scratch bucket takes none). */
    private final MultipartOperations multipart;
    private final ObjectStore below;
    private final WriteChecks checks;
    private final List<MultipartListing.Source> uploadSources;
    private final KeyLocks locks = new KeyLocks();
    private final Listing listing;
    private final CopyOperations copies;
    private final dev.ferry.writeback.Scratch scratch;
    /** The origin keeps a key ending in '/' as a folder, which holds no bytes (the embedded store). */
    private final boolean slashKeysHoldNoBytes;
    /** Where the origin's parts lie, for a part's read of an object the local stores did not assemble (S3), or null. */
    private final PartRanges originParts;

    /**
     * @param below     the store under the local tier: conditional writes check the object there, not in the
     *                  local tier's metadata (which may be up to its TTL old)
     * @param writeBack when not null, PUTs are acknowledged once on local disk and uploaded in the background,
     *                  and reads of keys not yet uploaded are served from it
     * @param checks    what write-back checks before acknowledging (null without write-back)
     * @param originUploads the origin's pending multipart uploads when it can list them (a folder store), else null
     * @param spoolDir  where a copy's source bytes are kept while they are written
     * @param maxCopyBytes the largest object (or part) one copy request may copy
     * @param scratch   the node-local scratch bucket, kept on local disk and never uploaded, or null
     * @param slashKeysHoldNoBytes the origin keeps a key ending in '/' as a folder (the embedded store): a write
     *                  of bytes to one is refused, as it would be lost
     * @param originParts where the origin's parts lie (S3), or null
     * @param clock     the daemon's: the time a copy answers as its LastModified
     */
    S3Service(CachingStore cache, ObjectStore below, BucketOperations buckets, WriteBackStore writeBack, LocalMultipart localMultipart,
            WriteChecks checks, dev.ferry.store.PendingUploads originUploads, Path spoolDir, long maxCopyBytes,
            dev.ferry.writeback.Scratch scratch, boolean slashKeysHoldNoBytes, PartRanges originParts, Clock clock) {
        this.scratch = scratch;
        this.slashKeysHoldNoBytes = slashKeysHoldNoBytes;
        this.originParts = originParts;
        this.cache = cache;
        this.below = below;
        this.buckets = buckets;
        this.writeBack = writeBack;
        this.localMultipart = localMultipart;
        this.checks = checks;
        this.front = writeBack != null ? writeBack : cache;
        this.multipart = writeBack != null ? writeBack : cache;
        List<MultipartListing.Source> sources = new ArrayList<>();
        if (localMultipart != null) {
            sources.add(localMultipart::list);
        }
        if (originUploads != null) {
            sources.add(originUploads::listUploads);
        }
        this.uploadSources = List.copyOf(sources);
        this.listing = new Listing(this::frontFor, writeBack == null ? (bucket, prefix) -> List.of()
                : (bucket, prefix) -> isScratch(bucket) ? List.of() : writeBack.pendingIn(bucket, prefix));
        this.copies = new CopyOperations(this::frontFor, spoolDir, maxCopyBytes, clock);
    }

    /**
     * The S3 semantics over {@code node}'s stores: reads and writes at its top, conditional writes checked under
     * its local tier; {@code maxCopyBytes} is the largest object (or part) one copy request may copy; {@code clock}
     * is the node's.
     */
    public static S3Service over(Node node, long maxCopyBytes, Clock clock) {
        WriteBackStore writeBack = node.writeBack();
        WriteChecks checks = writeBack == null ? null
                : new WriteChecks(node.belowCache(), node.folderOrigin(), writeBack, Duration.ofSeconds(30), clock);
        // under write-back the origin's uploads in progress are write-back's own: clients list the uploads they started
        return new S3Service(node.cache(), node.belowCache(), node.buckets(), writeBack, node.localMultipart(), checks,
                writeBack == null ? node.originUploads() : null, node.spool(), maxCopyBytes, node.scratch(),
                node.originKeepsSlashKeysAsFolders(), node.originParts(), clock);
    }

    /** True for the scratch bucket: served from local disk only, never from or to the object store. */
    private boolean isScratch(String bucket) {
        return scratch != null && scratch.holds(bucket);
    }

    /** The store a bucket's objects are read, listed and deleted through. */
    private ObjectStore frontFor(String bucket) {
        return isScratch(bucket) ? scratch : front;
    }

    /** Whether this request's write goes through write-back (configured, and not refused by {@code x-ferry-write: through}). */
    private boolean writesBack(Request r) {
        return writeBack != null && !"through".equals(r.headers().get("x-ferry-write"));
    }


    public Reply handle(Request r) throws S3Error, IOException {
        HttpMethod m = r.method();
        if (r.bucket() == null) {
            if (m.equals(HttpMethod.GET)) {
                return listBuckets(r);
            }
            throw S3Error.notImplemented(m + " /");
        }
        if (isScratch(r.bucket()) && (r.has("uploads") || r.has("uploadId") || r.has("partNumber"))) {
            throw S3Error.notImplemented("Multipart upload to the scratch bucket " + r.bucket() + " (PUT the object whole)");
        }
        if (r.key() == null) {
            return bucketOperation(r);
        }
        ObjectKey key = ObjectKey.of(r.bucket(), r.key());
        // "null" is the one version ListObjectVersions names (an unversioned bucket's): it is the current one
        if (r.has("versionId") && !NULL_VERSION.equals(r.param("versionId")) && !m.equals(HttpMethod.PUT) && !m.equals(HttpMethod.POST)) {
            throw S3Error.notImplemented("versionId other than 'null' (ferry serves the current version only)");
        }
        if (m.equals(HttpMethod.GET) && r.has("acl")) {
            frontFor(key.bucket()).head(key); // NoSuchKey as S3 answers it
            return Acls.policy();
        }
        if (m.equals(HttpMethod.GET) && r.has("attributes")) {
            return ObjectAttributesReply.of(r, checksummed(key, frontFor(key.bucket()).head(key), true));
        }
        if (m.equals(HttpMethod.PUT) && r.has("acl") && !r.headers().contains(CopyOperations.SOURCE)) {
            Acls.checkPut(r.headers(), r.body() == null ? new byte[0] : r.body().bytes());
            frontFor(key.bucket()).head(key);
            return Reply.empty(HttpResponseStatus.OK);
        }
        if (m.equals(HttpMethod.GET) || m.equals(HttpMethod.HEAD)) {
            for (String unsupported : List.of("acl", "tagging", "attributes", "legal-hold", "retention", "torrent", "uploadId")) {
                if (r.has(unsupported)) {
                    throw S3Error.notImplemented(m + " object ?" + unsupported);
                }
            }
            if (r.has("partNumber")) {
                return getPart(r, key, m.equals(HttpMethod.HEAD));
            }
            return getObject(r, key, m.equals(HttpMethod.HEAD));
        }
        if (m.equals(HttpMethod.PUT)) {
            if (r.headers().contains(CopyOperations.SOURCE)) {
                return r.has("uploadId") || r.has("partNumber") ? uploadPartCopy(r, key) : copyObject(r, key);
            }
            if (r.has("uploadId") || r.has("partNumber")) {
                return uploadPart(r, key);
            }
            for (String unsupported : List.of("acl", "tagging", "retention", "legal-hold")) {
                if (r.has(unsupported)) {
                    throw S3Error.notImplemented("PUT object ?" + unsupported);
                }
            }
            return putObject(r, key);
        }
        if (m.equals(HttpMethod.POST)) {
            if (r.has("uploads")) {
                ObjectAttributes attributes = ObjectHeaders.from(r.headers());
                Checksum declared = declaredChecksum(r.headers());
                if (declared != null) {
                    attributes = declared.applyTo(attributes);
                }
                MultipartUpload u;
                if (!isScratch(key.bucket())) {
                    refuseFolderKey(key, 1, "a multipart upload"); // it has bytes, or nothing to complete
                }
                if (writesBack(r) && localMultipart != null) {
                    checks.check(key, attributes); // refused now, not after the parts are in
                    u = localMultipart.start(key, attributes);
                } else {
                    u = multipart.startMultipart(key, attributes);
                }
                Reply.Full reply = Reply.xml(HttpResponseStatus.OK, new Xml().openRoot("InitiateMultipartUploadResult")
                        .element("Bucket", key.bucket()).element("Key", key.key()).element("UploadId", u.uploadId())
                        .close("InitiateMultipartUploadResult"));
                if (declared != null) {
                    reply.headers().set(Checksum.ALGORITHM_HEADER, declared.algorithm().name());
                    reply.headers().set(Checksum.TYPE_HEADER, declared.type().name());
                }
                return reply;
            }
            if (r.has("uploadId")) {
                return completeMultipart(r, key);
            }
            throw S3Error.notImplemented("POST object without ?uploads or ?uploadId");
        }
        if (m.equals(HttpMethod.DELETE)) {
            if (r.has("uploadId")) {
                MultipartUpload u = new MultipartUpload(key, uploadId(r));
                if (LocalMultipart.owns(u.uploadId()) && localMultipart != null) {
                    localMultipart.abort(u);
                } else {
                    multipart.abortMultipart(u);
                }
                return Reply.empty(HttpResponseStatus.NO_CONTENT);
            }
            locks.with(key, () -> {
                frontFor(key.bucket()).delete(key);
                return null;
            });
            Reply.Full deleted = Reply.empty(HttpResponseStatus.NO_CONTENT);
            if (writeBack != null && !isScratch(key.bucket())) {
                // journaled behind a write not uploaded yet, or made in the store
                deleted.headers().set("x-ferry-durability", writeBack.deletePending(key) ? "local" : "durable");
            }
            return deleted;
        }
        throw S3Error.notImplemented(m + " object");
    }

    // ---- buckets -----------------------------------------------------------------------------------

    /** The most buckets one ListBuckets page holds, and its default with {@code max-buckets} given (S3's). */
    static final int MAX_BUCKETS = 10_000;

    /**
     * ListBuckets: by name; {@code prefix}, and pages of {@code max-buckets} (1 to 10,000) with a
     * {@code ContinuationToken} to resume after the page's last bucket. Without {@code max-buckets}, all buckets.
     */
    private Reply listBuckets(Request r) throws S3Error, IOException {
        if (buckets == null) {
            throw S3Error.notImplemented("ListBuckets on this upstream");
        }
        String prefix = r.param("prefix");
        int max = Integer.MAX_VALUE;
        if (r.has("max-buckets")) {
            try {
                max = Integer.parseInt(r.param("max-buckets") == null ? "" : r.param("max-buckets"));
            } catch (NumberFormatException e) {
                max = 0;
            }
            if (max < 1 || max > MAX_BUCKETS) {
                throw S3Error.invalidArgument("max-buckets must be an integer from 1 to " + MAX_BUCKETS + ", not '"
                        + Uris.abbreviate(String.valueOf(r.param("max-buckets"))) + "'");
            }
        }
        String token = r.param("continuation-token");
        String after = token == null || token.isEmpty() ? null : ContinuationTokens.parse(token).after();
        if (token != null && !token.isEmpty() && after == null) {
            throw S3Error.invalidArgument("The continuation token provided is incorrect");
        }
        List<BucketOperations.Bucket> list = new ArrayList<>(buckets.listBuckets());
        if (scratch != null && list.stream().noneMatch(b -> b.name().equals(scratch.bucket()))) {
            list.add(new BucketOperations.Bucket(scratch.bucket(), java.time.Instant.EPOCH)); // local only: no creation date kept
        }
        list.sort(java.util.Comparator.comparing(BucketOperations.Bucket::name));
        Xml x = owner(new Xml().openRoot("ListAllMyBucketsResult"), "Owner").open("Buckets");
        int listed = 0;
        String last = null;
        String next = null;
        for (BucketOperations.Bucket b : list) {
            if ((prefix != null && !b.name().startsWith(prefix)) || (after != null && b.name().compareTo(after) <= 0)) {
                continue;
            }
            if (listed == max) {
                next = ContinuationTokens.of(new ContinuationTokens.Resume(null, last, false)); // resume after it
                break;
            }
            x.open("Bucket").element("Name", b.name()).element("CreationDate", Listing.ISO.format(b.created())).close("Bucket");
            listed++;
            last = b.name();
        }
        x.close("Buckets").element("ContinuationToken", next).element("Prefix", prefix);
        return Reply.xml(HttpResponseStatus.OK, x.close("ListAllMyBucketsResult"));
    }

    private Reply bucketOperation(Request r) throws S3Error, IOException {
        HttpMethod m = r.method();
        if (m.equals(HttpMethod.PUT) && r.query().isEmpty()) {
            if (buckets == null) {
                throw S3Error.notImplemented("CreateBucket on this upstream");
            }
            if (!isScratch(r.bucket())) { // the scratch bucket always exists, and only here
                buckets.createBucket(r.bucket());
            }
            if (checks != null) {
                checks.forget(r.bucket());
            }
            HttpHeaders h = new DefaultHttpHeaders();
            h.set("Location", "/" + r.bucket());
            return new Reply.Full(HttpResponseStatus.OK, h, new byte[0], false);
        }
        if (m.equals(HttpMethod.HEAD) && r.query().isEmpty()) {
            frontFor(r.bucket()).list(new ListRequest(r.bucket(), "", null, null, 1));
            return new Reply.Full(HttpResponseStatus.OK, new DefaultHttpHeaders(), new byte[0], true);
        }
        if (m.equals(HttpMethod.GET)) {
            if (r.has("location")) {
                frontFor(r.bucket()).list(new ListRequest(r.bucket(), "", null, null, 1));
                return Reply.xml(HttpResponseStatus.OK, new Xml().openRoot("LocationConstraint").close("LocationConstraint"));
            }
            if (r.has("uploads")) {
                if (uploadSources.isEmpty()) {
                    throw S3Error.notImplemented("ListMultipartUploads on this upstream");
                }
                frontFor(r.bucket()).list(new ListRequest(r.bucket(), "", null, null, 1)); // NoSuchBucket as S3 answers it
                return MultipartListing.list(r, uploadSources);
            }
            if (r.has("versions")) {
                return listing.listVersions(r);
            }
            if (r.has("acl")) {
                frontFor(r.bucket()).list(new ListRequest(r.bucket(), "", null, null, 1)); // NoSuchBucket as S3 answers it
                return Acls.policy();
            }
            for (String unsupported : List.of("acl", "policy", "versioning", "lifecycle", "cors", "tagging",
                    "website", "logging", "notification", "replication", "encryption", "object-lock")) {
                if (r.has(unsupported)) {
                    throw S3Error.notImplemented("GET bucket ?" + unsupported);
                }
            }
            return listing.listObjects(r);
        }
        if (m.equals(HttpMethod.POST) && r.has("delete")) {
            return deleteObjects(r);
        }
        if (m.equals(HttpMethod.PUT) && r.has("acl") && r.query().size() == 1) {
            Acls.checkPut(r.headers(), r.body() == null ? new byte[0] : r.body().bytes());
            frontFor(r.bucket()).list(new ListRequest(r.bucket(), "", null, null, 1));
            return Reply.empty(HttpResponseStatus.OK);
        }
        if (m.equals(HttpMethod.DELETE) && r.query().isEmpty()) {
            return deleteBucket(r.bucket());
        }
        throw S3Error.notImplemented(m + " bucket" + (r.query().isEmpty() ? "" : " ?" + String.join("&", r.query().keySet())));
    }

    /**
     * DeleteBucket: 204 when it was empty, 409 BucketNotEmpty otherwise. A write-back write into the bucket
     * that is still only local counts: the bucket is not empty, even though the store's is.
     */
    private Reply deleteBucket(String bucket) throws S3Error, IOException {
        if (buckets == null) {
            throw S3Error.notImplemented("DeleteBucket on this upstream");
        }
        if (writeBack != null && writeBack.holdsLocallyIn(bucket)) {
            throw new S3Error(409, "BucketNotEmpty", "bucket " + bucket + " is not empty: it holds writes not uploaded yet");
        }
        if (writeBack != null && writeBack.deletesPendingIn(bucket)) {
            // deletes waiting behind uploads: the store still holds their keys until they are made
            writeBack.flush(k -> k.bucket().equals(bucket), Duration.ofSeconds(30));
        }
        buckets.deleteBucket(bucket);
        if (checks != null) {
            checks.forget(bucket); // a write arriving now must find the bucket gone, not a cached "it exists"
        }
        return Reply.empty(HttpResponseStatus.NO_CONTENT);
    }

    /**
     * DeleteObjects. The whole request is read before anything is deleted, so that a malformed or ambiguous
     * one (an {@code <Object>} with two {@code <Key>}s or {@code <VersionId>}s) deletes nothing. A version
     * id is taken as sent: {@code " null"} is not the null version.
     */
    private Reply deleteObjects(Request r) throws S3Error, IOException {
        Element root = Xml.parse(r.body().bytes(), "Delete");
        boolean quiet = "true".equalsIgnoreCase(Xml.text(root, "Quiet"));
        List<Element> objects = Xml.children(root, "Object");
        if (objects.size() > 1000) {
            throw S3Error.badRequest("MalformedXML", "a Delete request may name at most 1000 objects, not " + objects.size());
        }
        record Named(String key, String version) {
        }
        List<Named> named = new ArrayList<>(objects.size());
        for (Element o : objects) {
            String k = Xml.rawText(o, "Key"); // keys are bytes: a key of spaces is a key
            if (k == null || k.isEmpty()) {
                throw S3Error.badRequest("MalformedXML", "an Object in a Delete request has no Key");
            }
            named.add(new Named(k, Xml.rawText(o, "VersionId")));
        }
        frontFor(r.bucket()).list(new ListRequest(r.bucket(), "", null, null, 1)); // a missing bucket fails it whole: NoSuchBucket
        Xml x = new Xml().openRoot("DeleteResult");
        for (Named o : named) {
            String k = o.key();
            try {
                String version = o.version();
                if (version != null && !version.equals(NULL_VERSION)) {
                    throw S3Error.notImplemented("VersionId other than 'null' (ferry serves the current version only)");
                }
                ObjectKey key = ObjectKey.of(r.bucket(), Keys.check(k));
                locks.with(key, () -> {
                    frontFor(key.bucket()).delete(key);
                    return null;
                });
                if (!quiet) {
                    x.open("Deleted").element("Key", k).close("Deleted");
                }
            } catch (S3Error e) {
                x.open("Error").element("Key", k).element("Code", e.code()).element("Message", e.getMessage()).close("Error");
            } catch (IOException e) {
                S3Error s = S3Error.from(e);
                x.open("Error").element("Key", k).element("Code", s.code()).element("Message", s.getMessage()).close("Error");
            }
        }
        return Reply.xml(HttpResponseStatus.OK, x.close("DeleteResult"));
    }

    // ---- objects -----------------------------------------------------------------------------------

    /**
     * A GET or HEAD answered without blocking, or null: the common case of a hit, when the object's
     * metadata is fresh in the cache and every block of the read is on local disk. Runs on the event loop,
     * saving two thread hand-offs per request; everything else goes to a worker thread ({@link #handle}).
     */
    public Reply tryFast(Request r) throws S3Error, IOException {
        boolean head = r.method().equals(HttpMethod.HEAD);
        if (r.bucket() == null || r.key() == null || !(head || r.method().equals(HttpMethod.GET)) || !r.query().isEmpty()) {
            return null;
        }
        ObjectKey key = ObjectKey.of(r.bucket(), r.key());
        if ((writeBack != null && writeBack.holdsLocally(key)) || isScratch(key.bucket())) {
            return null;
        }
        ObjectMeta meta = cache.freshMeta(key);
        if (meta == null) {
            return null;
        }
        if (ObjectHeaders.checksumWanted(r.headers())) {
            if (head) {
                return null; // a HEAD may ask upstream for the checksum (CachingStore.withChecksum): not on the event loop
            }
            meta = cache.withChecksum(key, meta, false);
        }
        return getObject(r, key, head, meta, false, false);
    }

    /** The header a daemon sends another to read only what that one holds on disk (never fetching). */
    private static final String CACHED_ONLY = Node.CACHED_ONLY;

    private Reply getObject(Request r, ObjectKey key, boolean head) throws S3Error, IOException {
        if (r.headers().contains(CACHED_ONLY)) {
            String ifMatch = r.headers().get("If-Match");
            ObjectMeta known = ifMatch == null ? cache.freshMeta(key) : cache.knownMeta(key, ObjectMeta.stripQuotes(ifMatch.trim()));
            Reply reply = known == null || (writeBack != null && writeBack.holdsLocally(key)) ? null : getObject(r, key, head, known, true, false);
            if (reply == null) {
                throw new S3Error(404, "NotCached", key + " is not on this daemon's disk (asked for cached blocks only)");
            }
            return reply;
        }
        if (!head) {
            Reply read = readUnknown(r, key);
            if (read != null) {
                return read;
            }
        }
        ObjectMeta meta;
        try {
            meta = frontFor(key.bucket()).head(key);
        } catch (ObjectNotFoundException e) {
            if (!head) {
                // a HEAD's 404 has no body: an upstream cannot say whether the key or its bucket is missing; a GET names which
                frontFor(key.bucket()).list(new ListRequest(key.bucket(), "", null, null, 1));
            }
            throw e;
        }
        if (ObjectHeaders.checksumWanted(r.headers())) {
            meta = checksummed(key, meta, head);
        }
        return getObject(r, key, head, meta, true, true);
    }

    /**
     * {@code meta} with its checksum where the store keeps one, for a client that asks for it: asked for now when
     * {@code wait} (a HEAD), in the background for a read ({@link CachingStore#withChecksum}).
     */
    private ObjectMeta checksummed(ObjectKey key, ObjectMeta meta, boolean wait) throws IOException {
        if (isScratch(key.bucket()) || (writeBack != null && writeBack.holdsLocally(key))) {
            return meta; // a local copy's metadata is all there is
        }
        return cache.withChecksum(key, meta, wait);
    }

    /**
     * A GET of an object whose metadata the local tier does not hold fresh: the read itself asks upstream, one
     * ranged GET whose answer is the metadata ({@link CachingStore#get}), with no HEAD before it (issue 26: a miss
     * is one request). Null where a HEAD comes first, as before: the metadata is fresh (nothing to ask), a
     * suffix or multi-range (where it starts depends on the size), a client revalidating its copy ({@code If-None-Match},
     * {@code If-Modified-Since}: a 304 needs no bytes), a local copy (write-back, scratch), a range that upstream finds past the
     * end (answered 416 by the usual path). A client asking for the checksum ({@code x-amz-checksum-mode}, which
     * boto3 and the AWS SDKs send on every GET by default) is answered it when the store's answer names it; a
     * ranged GET's does not, so this first read goes without it (the SDK then has nothing to check), and one
     * HEAD in the background, not in front of a read, gets it for the key's later reads ({@link #checksummed}).
     */
    private Reply readUnknown(Request r, ObjectKey key) throws S3Error, IOException {
        if (isScratch(key.bucket()) || (writeBack != null && writeBack.holdsLocally(key))
                || r.headers().contains("If-None-Match") || r.headers().contains("If-Modified-Since") || cache.freshMeta(key) != null) {
            return null;
        }
        String header = r.headers().get("Range");
        ByteRange asked = null;
        if (header != null) {
            String spec = header.trim();
            if (!spec.startsWith("bytes=") || spec.contains(",") || spec.substring("bytes=".length()).trim().startsWith("-")) {
                return null;
            }
            try {
                asked = Ranges.parse(header, Long.MAX_VALUE, key);
            } catch (S3Error malformed) {
                return null; // answered by the usual path, as ever
            }
        }
        ObjectContent content;
        try {
            content = frontFor(key.bucket()).get(new GetRequest(key, asked, null));
        } catch (ObjectNotFoundException e) {
            // a store's 404 may mean the key or its bucket: S3 names which
            frontFor(key.bucket()).list(new ListRequest(key.bucket(), "", null, null, 1));
            throw e;
        } catch (StoreException e) {
            if (e.httpStatus() == 416) {
                return null;
            }
            throw e;
        }
        return getObject(r, key, false, content.meta(), true, true, null, content);
    }

    /**
     * GET or HEAD {@code ?partNumber=N}: the bytes of part N of an object a multipart upload made (206, its
     * {@code Content-Range}, {@code x-amz-mp-parts-count}), as a ranged read; part 1 of any other object is all of
     * it (206 too, without a part count). A part that is not there is 400 InvalidPart. Where the part lies comes
     * from the sizes the local stores keep, else from the origin (S3); an origin that cannot tell (s3proxy) makes
     * it 501.
     */
    private Reply getPart(Request r, ObjectKey key, boolean head) throws S3Error, IOException {
        int n = partNumber(r.param("partNumber"));
        if (r.headers().contains("Range")) {
            throw S3Error.badRequest("InvalidRequest", "Cannot specify both Range header and partNumber query parameter");
        }
        ObjectMeta meta = frontFor(key.bucket()).head(key);
        if (ObjectHeaders.checksumWanted(r.headers())) {
            meta = checksummed(key, meta, head);
        }
        int count = ObjectAttributesReply.partsCount(meta.etag());
        if (n > Math.max(count, 1)) {
            throw S3Error.badRequest("InvalidPart", "The requested partnumber is not satisfiable: " + key + " has "
                    + Math.max(count, 1) + (count > 1 ? " parts" : " part") + ", not " + n);
        }
        if (count == 0) { // the one part is the whole object, answered as a range of all of it (206), as S3 does
            return getObject(r, key, head, meta, true, true, meta.size() == 0 ? null : ByteRange.of(0, meta.size()));
        }
        List<Long> sizes = Parts.sizes(meta.attributes());
        ByteRange part = sizes != null && sizes.size() == count ? Parts.range(sizes, n)
                : originParts != null && !isScratch(key.bucket()) && (writeBack == null || !writeBack.holdsLocally(key))
                        ? originParts.partRange(key, meta.etag(), n) : null;
        if (part == null) {
            throw S3Error.notImplemented("GET ?partNumber of " + key + " (its store does not tell where its parts lie; read the part with a Range)");
        }
        Reply reply = getObject(r, key, head, meta, true, true, part);
        headers(reply).set("x-amz-mp-parts-count", count);
        List<Checksum> sums = Parts.checksums(meta.attributes());
        boolean answered = !(reply instanceof Reply.Full f) || f.status().code() / 100 == 2; // not a 304
        if (sums != null && sums.size() == count && answered && ObjectHeaders.checksumWanted(r.headers())) { // the part's own, as S3 answers
            headers(reply).set(sums.get(n - 1).algorithm().header(), sums.get(n - 1).value());
            headers(reply).set(Checksum.TYPE_HEADER, Checksum.Type.FULL_OBJECT.name());
        }
        return reply;
    }

    private static HttpHeaders headers(Reply reply) {
        return switch (reply) {
            case Reply.Full f -> f.headers();
            case Reply.Files f -> f.headers();
            case Reply.Streamed s -> s.headers();
        };
    }

    /**
     * GET or HEAD of {@code meta}; null when the read would need upstream and {@code mayFetch} is false, or a
     * cached block would need a check (reading it from disk) and {@code mayCheck} is false (on the event loop).
     */
    private Reply getObject(Request r, ObjectKey key, boolean head, ObjectMeta meta, boolean mayCheck, boolean mayFetch)
            throws S3Error, IOException {
        return getObject(r, key, head, meta, mayCheck, mayFetch, null);
    }

    /** ... of {@code part} of it, when not null (a part's read: its range, whatever the request's Range). */
    private Reply getObject(Request r, ObjectKey key, boolean head, ObjectMeta meta, boolean mayCheck, boolean mayFetch, ByteRange part)
            throws S3Error, IOException {
        return getObject(r, key, head, meta, mayCheck, mayFetch, part, null);
    }

    /**
     * ... answered from {@code opened} (a read of {@code meta} already open, closed here unless it is the reply's) when
     * it holds just the bytes the reply sends; otherwise as usual.
     */
    private Reply getObject(Request r, ObjectKey key, boolean head, ObjectMeta meta, boolean mayCheck, boolean mayFetch, ByteRange part,
            ObjectContent opened) throws S3Error, IOException {
        try {
            return getObjectFrom(r, key, head, meta, mayCheck, mayFetch, part, opened);
        } catch (S3Error | IOException | RuntimeException e) {
            if (opened != null) {
                opened.close();
            }
            throw e;
        }
    }

    private Reply getObjectFrom(Request r, ObjectKey key, boolean head, ObjectMeta meta, boolean mayCheck, boolean mayFetch, ByteRange part,
            ObjectContent opened) throws S3Error, IOException {
        HttpHeaders h = objectHeaders(meta);
        if (Preconditions.notModified(r.headers(), meta, key)) {
            closeUnused(opened);
            return new Reply.Full(HttpResponseStatus.NOT_MODIFIED, h, new byte[0], true);
        }
        ResponseOverrides.apply(r, h);
        ByteRange range = part != null ? part : Ranges.parse(r.headers().get("Range"), meta.size(), key);
        HttpResponseStatus status = HttpResponseStatus.OK;
        if (range != null) {
            status = HttpResponseStatus.PARTIAL_CONTENT;
            h.set("Content-Range", "bytes " + range.offset() + "-" + (range.end() - 1) + "/" + meta.size());
        }
        long length = range != null ? range.length() : meta.size();
        h.set("Content-Length", length);
        if (range == null && ObjectHeaders.checksumWanted(r.headers())) { // a whole object's: a range has none
            ObjectHeaders.applyChecksum(meta.attributes(), h);
        }
        if (head || length == 0) {
            closeUnused(opened);
            return new Reply.Full(status, h, new byte[0], true);
        }
        if (opened != null) {
            if ((range != null ? range : ByteRange.of(0, meta.size())).equals(opened.range())) {
                return new Reply.Streamed(status, h, opened);
            }
            closeUnused(opened); // another range than the one opened (a part's): read it as usual
        }
        GetRequest get = new GetRequest(key, range, meta.etag());
        if ((writeBack == null || !writeBack.holdsLocally(key)) && !isScratch(key.bucket())) {
            CachingStore.ResidentRead resident = cache.openResident(get, mayCheck);
            if (resident != null) {
                return new Reply.Files(status, h, resident);
            }
        }
        if (!mayFetch) {
            return null; // on the event loop (tryFast), or a peer asking for cached blocks only: not from upstream
        }
        ObjectContent content = frontFor(key.bucket()).get(get);
        if (content.length() != length) {
            // the read would not keep the promise of the headers, which have not left yet: say so instead
            content.close();
            throw new S3Error(503, "ServiceUnavailable", "the store has " + content.length() + " bytes to send of " + key + " where "
                    + length + " were announced; nothing was sent, ask again");
        }
        return new Reply.Streamed(status, h, content);
    }

    private static void closeUnused(ObjectContent opened) throws IOException {
        if (opened != null) {
            opened.close();
        }
    }

    private static HttpHeaders objectHeaders(ObjectMeta meta) {
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("ETag", quote(meta.etag()));
        h.set("Last-Modified", HTTP_DATE.format(meta.lastModified()));
        h.set("Accept-Ranges", "bytes");
        ObjectHeaders.apply(meta.attributes(), h);
        return h;
    }

    static String quote(String etag) {
        return "\"" + etag + "\"";
    }

    /**
     * Checks a write's {@code If-Match} / {@code If-None-Match} against the object as it is now: the local
     * copy of a write not yet uploaded, else the store under the local tier. Call under the key's lock.
     */
    private void checkWrite(Request r, ObjectKey key) throws S3Error, IOException {
        if (!Preconditions.conditionalWrite(r.headers())) {
            return;
        }
        ObjectMeta current;
        try {
            current = isScratch(key.bucket()) ? scratch.head(key)
                    : writeBack != null && writeBack.holdsLocally(key) ? writeBack.head(key) : below.head(key);
        } catch (ObjectNotFoundException e) {
            current = null;
        } catch (StoreException e) {
            if (e.kind() != StoreException.Kind.NOT_FOUND) {
                throw e;
            }
            current = null;
        }
        Preconditions.checkWrite(r.headers(), key, current);
    }

    private Reply putObject(Request r, ObjectKey key) throws S3Error, IOException {
        RequestBody body = requireBody(r);
        ObjectAttributes attributes = ObjectHeaders.from(r.headers());
        if (body.checksum() != null) { // verified: kept with the object, as S3 keeps it
            attributes = body.checksum().applyTo(attributes);
        }
        PutBody data = PutBody.ofFile(body.file()).withAttributes(attributes);
        Reply.Full reply = locks.with(key, () -> {
            checkWrite(r, key);
            return put(r, key, data);
        });
        ObjectHeaders.applyChecksum(attributes, reply.headers());
        return reply;
    }

    /** CopyObject: the source's bytes written as a PUT's body would be (conditions, lock, write-back included). */
    private Reply copyObject(Request r, ObjectKey key) throws S3Error, IOException {
        try (CopyOperations.Source source = copies.read(r, key, false)) {
            // COPY (the default) keeps the source's headers and metadata; REPLACE takes the request's
            ObjectAttributes attributes = "REPLACE".equals(r.headers().get("x-amz-metadata-directive"))
                    ? ObjectHeaders.from(r.headers()) : Parts.strip(Checksum.strip(source.meta().attributes())); // one part
            Checksum checksum = copyChecksum(r.headers(), source);
            if (checksum != null) {
                attributes = checksum.applyTo(attributes);
            }
            PutBody data = PutBody.ofFile(source.file()).withAttributes(attributes);
            return copies.copied(locks.with(key, () -> {
                checkWrite(r, key);
                return put(r, key, data);
            }), checksum);
        }
    }

    /**
     * The checksum a copy keeps: of the algorithm the request names ({@code x-amz-checksum-algorithm}), else of
     * the source's, over the bytes copied (a one-part object: a composite source's becomes a FULL_OBJECT one, as
     * a copy is one PUT); the source's own value when it already is that. Null when neither names one.
     */
    private static Checksum copyChecksum(HttpHeaders headers, CopyOperations.Source source) throws S3Error, IOException {
        Checksum had = Checksum.of(source.meta().attributes());
        Checksum.Algorithm algorithm = had == null ? null : had.algorithm();
        String asked = headers.get(Checksum.ALGORITHM_HEADER);
        if (asked != null) {
            algorithm = Checksum.Algorithm.named(asked);
            if (algorithm == null) {
                throw S3Error.badRequest("InvalidRequest", "Checksum algorithm provided is unsupported. Please try again with any of the "
                        + "valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]");
            }
        }
        if (algorithm == null) {
            return null;
        }
        if (had != null && had.algorithm() == algorithm && had.type() == Checksum.Type.FULL_OBJECT) {
            return had;
        }
        return Checksum.ofFile(algorithm, source.file());
    }

    /**
     * Refuses, before anything is written or acknowledged, bytes for a key the origin would keep as an empty
     * folder (a key ending in '/' in the embedded store). S3 takes such keys, and so does ferry over S3; empty
     * ones ("folder markers") are taken everywhere but a folder store.
     */
    private void refuseFolderKey(ObjectKey key, long length, String what) throws S3Error {
        if (slashKeysHoldNoBytes && length > 0 && key.key().endsWith("/")) {
            throw S3Error.badRequest("InvalidRequest", "the embedded store keeps a key ending in '/' as a folder, which holds no bytes: "
                    + what + " to " + key + " would be lost, so nothing was written (such a key may only be written empty)");
        }
    }

    private Reply.Full put(Request r, ObjectKey key, PutBody data) throws S3Error, IOException {
        HttpHeaders h = new DefaultHttpHeaders();
        if (!isScratch(key.bucket())) {
            refuseFolderKey(key, data.length(), data.length() + " bytes");
        }
        if (isScratch(key.bucket())) {
            h.set("ETag", quote(scratch.put(key, data).etag()));
            h.set("x-ferry-durability", "local"); // and never more: scratch is not uploaded
        } else if (writesBack(r)) {
            checks.check(key, data.attributes()); // what would fail forever is refused now, not acknowledged
            WriteStatus w = writeBack.write(key, data);
            h.set("ETag", quote(w.etag()));
            h.set("x-ferry-durability", w.durability() == Durability.DURABLE ? "durable" : "local");
        } else if (writeBack != null && writeBack.holdsLocally(key)) {
            // an earlier write of this key is still local: this one must land after it, so it goes the same
            // way and waits for the fence (every pending write: slower, but never reordered)
            writeBack.write(key, data);
            dev.ferry.writeback.FlushResult fence = writeBack.flush(java.time.Duration.ofMinutes(10));
            if (!fence.complete() || fence.firstError() != null) {
                throw new S3Error(503, "ServiceUnavailable", "the write is kept locally but could not be made durable yet: "
                        + (fence.firstError() != null ? fence.firstError() : "the fence timed out"));
            }
            h.set("ETag", quote(front.head(key).etag()));
            h.set("x-ferry-durability", "durable");
        } else {
            try {
                h.set("ETag", quote(cache.put(key, data).etag()));
            } catch (StoreException e) {
                throw damagedOnTheWay(key, e);
            }
            h.set("x-ferry-durability", "durable");
        }
        return new Reply.Full(HttpResponseStatus.OK, h, new byte[0], false);
    }

    /**
     * A store that refuses a body as not matching its digest (BadDigest: the checksum that travels with it since
     * the daemon keeps checksums) refuses bytes the daemon checked when they arrived: they were changed between the
     * two, not by the client. That is the daemon's (or the network's) fault, so it answers 503, which clients retry,
     * not the store's 400, which would blame the client's bytes. Nothing was kept.
     */
    private static IOException damagedOnTheWay(ObjectKey key, StoreException e) {
        String code = e.errorCode();
        if ("BadDigest".equals(code) || "XAmzContentSHA256Mismatch".equals(code) || "InvalidDigest".equals(code)) {
            return new StoreException(StoreException.Kind.RETRYABLE, 503, "ServiceUnavailable", "the object store refused the bytes of "
                    + key + " as changed on the way from the daemon (" + code + "); nothing was kept: send them again", e);
        }
        return e;
    }

    private static RequestBody requireBody(Request r) throws S3Error {
        if (r.body() == null) {
            throw new S3Error(411, "MissingContentLength", "the request has no body; send Content-Length");
        }
        return r.body();
    }

    private static String uploadId(Request r) throws S3Error {
        String id = r.param("uploadId");
        if (id == null || id.isEmpty() || id.length() > 1024) {
            throw S3Error.invalidArgument("uploadId is missing or too long");
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c < 0x21 || c > 0x7e || c == '/' || c == '\\') {
                throw new S3Error(404, "NoSuchUpload", "no such upload: the uploadId holds a character no upload id has");
            }
        }
        return id;
    }

    private Reply uploadPart(Request r, ObjectKey key) throws S3Error, IOException {
        String id = uploadId(r);
        int part = partNumber(r.param("partNumber"));
        RequestBody body = requireBody(r);
        Checksum checksum = body.checksum(); // goes with the part to a store that keeps it (S3); the folder store computes its own
        PutBody data = PutBody.ofFile(body.file());
        CompletedPart done = storePart(new MultipartUpload(key, id), part,
                checksum == null ? data : data.withAttributes(checksum.applyTo(ObjectAttributes.NONE)));
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("ETag", quote(done.etag()));
        if (checksum != null) {
            h.set(checksum.algorithm().header(), checksum.value());
        }
        return new Reply.Full(HttpResponseStatus.OK, h, new byte[0], false);
    }

    /** UploadPartCopy: a range of the source (or all of it) stored as the part. */
    private Reply uploadPartCopy(Request r, ObjectKey key) throws S3Error, IOException {
        String id = uploadId(r);
        int part = partNumber(r.param("partNumber"));
        try (CopyOperations.Source source = copies.read(r, key, true)) {
            return copies.partCopied(storePart(new MultipartUpload(key, id), part, PutBody.ofFile(source.file())));
        }
    }

    private CompletedPart storePart(MultipartUpload upload, int part, PutBody data) throws IOException {
        return LocalMultipart.owns(upload.uploadId()) && localMultipart != null
                ? localMultipart.uploadPart(upload, part, data)
                : multipart.uploadPart(upload, part, data);
    }

    private static int partNumber(String text) throws S3Error {
        int n;
        try {
            n = Integer.parseInt(text == null ? "" : text);
        } catch (NumberFormatException e) {
            throw S3Error.invalidArgument("partNumber must be a number from 1 to " + CompletedPart.MAX_PARTS + ", not '" + text + "'");
        }
        if (n < 1 || n > CompletedPart.MAX_PARTS) {
            throw S3Error.invalidArgument("partNumber must be 1 to " + CompletedPart.MAX_PARTS + ": " + n);
        }
        return n;
    }

    private Reply completeMultipart(Request r, ObjectKey key) throws S3Error, IOException {
        String id = uploadId(r);
        // no body at all is malformed XML too, as S3 answers it (not 411: a Complete's body is XML, not data)
        Element root = Xml.parse(r.body() == null ? new byte[0] : r.body().bytes(), "CompleteMultipartUpload");
        List<Element> partElements = Xml.children(root, "Part");
        if (partElements.isEmpty()) {
            throw S3Error.badRequest("MalformedXML", "CompleteMultipartUpload names no parts");
        }
        if (partElements.size() > CompletedPart.MAX_PARTS) {
            throw S3Error.badRequest("MalformedXML", "CompleteMultipartUpload names more than " + CompletedPart.MAX_PARTS + " parts");
        }
        List<CompletedPart> parts = new ArrayList<>(partElements.size());
        int previous = 0;
        for (Element p : partElements) {
            int n = partNumber(Xml.text(p, "PartNumber"));
            String etag = Xml.text(p, "ETag");
            if (etag == null || etag.isEmpty()) {
                throw S3Error.badRequest("MalformedXML", "part " + n + " has no ETag");
            }
            if (n <= previous) {
                throw S3Error.badRequest("InvalidPartOrder", "parts must be listed in ascending order: " + n + " after " + previous);
            }
            previous = n;
            Checksum partChecksum = null;
            for (Checksum.Algorithm a : Checksum.Algorithm.values()) {
                String v = Xml.text(p, a.element());
                if (v != null && !v.isBlank()) {
                    if (partChecksum != null) {
                        throw S3Error.badRequest("InvalidRequest", "part " + n + " names more than one checksum");
                    }
                    partChecksum = new Checksum(a, Checksum.Type.FULL_OBJECT, v.trim());
                }
            }
            parts.add(new CompletedPart(n, ObjectMeta.stripQuotes(etag), partChecksum));
        }
        MultipartUpload upload = new MultipartUpload(key, id);
        return locks.with(key, () -> {
            checkWrite(r, key);
            return complete(upload, parts);
        });
    }

    private Reply complete(MultipartUpload upload, List<CompletedPart> parts) throws S3Error, IOException {
        ObjectKey key = upload.key();
        String id = upload.uploadId();
        String etag;
        String durability = "durable";
        Checksum checksum = null;
        if (LocalMultipart.owns(id) && localMultipart != null) {
            String again = localMultipart.completedEtag(upload);
            if (again != null) { // a retried Complete of an upload already completed: S3 answers it the same
                etag = again;
                durability = writeBack.holdsLocally(key) ? "local" : "durable";
                checksum = checksumIfStill(key, etag);
            } else {
                checks.check(key);
                LocalMultipart.Assembled whole = localMultipart.assemble(upload, parts);
                // on failure the assembled object stays for a retry
                WriteStatus w = writeBack.writeParts(key, whole.body(), whole.partSizes(), whole.etag());
                localMultipart.finish(upload, w.etag());
                durability = w.durability() == Durability.DURABLE ? "durable" : "local";
                etag = w.etag();
                checksum = Checksum.of(whole.body().attributes());
            }
        } else {
            ObjectMeta meta = multipart.completeMultipart(upload, parts);
            etag = meta.etag();
            checksum = Checksum.of(meta.attributes());
        }
        Xml x = new Xml().openRoot("CompleteMultipartUploadResult")
                .element("Location", "/" + key.bucket() + "/" + key.key()).element("Bucket", key.bucket()).element("Key", key.key())
                .element("ETag", quote(etag));
        if (checksum != null) {
            x.element(checksum.algorithm().element(), checksum.value()).element("ChecksumType", checksum.type().name());
        }
        Reply.Full reply = Reply.xml(HttpResponseStatus.OK, x.close("CompleteMultipartUploadResult"));
        reply.headers().set("x-ferry-durability", durability);
        return reply;
    }

    /** The checksum of the object at {@code key} while it still has {@code etag}, else null. */
    private Checksum checksumIfStill(ObjectKey key, String etag) throws IOException {
        try {
            ObjectMeta now = front.head(key);
            return now.etag().equals(etag) ? Checksum.of(now.attributes()) : null;
        } catch (ObjectNotFoundException e) {
            return null;
        }
    }

    /**
     * The checksum a CreateMultipartUpload declares ({@code x-amz-checksum-algorithm}, {@code x-amz-checksum-type}),
     * or null; S3's refusals for what it cannot keep.
     */
    static Checksum declaredChecksum(HttpHeaders headers) throws S3Error {
        String algorithmName = headers.get(Checksum.ALGORITHM_HEADER);
        String typeName = headers.get(Checksum.TYPE_HEADER);
        if (algorithmName == null) {
            if (typeName != null) {
                throw S3Error.badRequest("InvalidRequest", "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.");
            }
            return null;
        }
        Checksum.Algorithm algorithm = Checksum.Algorithm.named(algorithmName);
        if (algorithm == null) {
            throw S3Error.badRequest("InvalidRequest", "Checksum algorithm provided is unsupported. Please try again with any of the valid types: "
                    + "[CRC32, CRC32C, CRC64NVME, SHA1, SHA256]");
        }
        Checksum.Type type = typeName == null ? Checksum.defaultType(algorithm) : Checksum.Type.named(typeName);
        if (type == null) {
            throw S3Error.badRequest("InvalidRequest", "Value for x-amz-checksum-type header is invalid.");
        }
        if (type == Checksum.Type.FULL_OBJECT && !algorithm.combines()) {
            throw S3Error.badRequest("InvalidRequest", "The FULL_OBJECT checksum type cannot be used with the "
                    + algorithm.name().toLowerCase(java.util.Locale.ROOT) + " checksum algorithm.");
        }
        if (type == Checksum.Type.COMPOSITE && algorithm == Checksum.Algorithm.CRC64NVME) {
            throw S3Error.badRequest("InvalidRequest", "The COMPOSITE checksum type cannot be used with the crc64nvme checksum algorithm.");
        }
        return Checksum.declared(algorithm, type);
    }

    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
