package dev.ferry.serve.s3;

import dev.ferry.tier.NodeStores;
import dev.ferry.serve.node.NodeStack;
import dev.ferry.serve.node.PeerLevel;
import dev.ferry.serve.protocol.FerryHeaders;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.RequestBody;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Xml;
import dev.ferry.store.ObjectKey;
import dev.ferry.time.Clock;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The S3 operations, blocking, on a request whose body (if any) has been received and checked: this class routes a
 * request by method, bucket, key and query to the operations, each a class of its own: {@link ObjectReads} (GET and
 * HEAD), {@link ObjectWrites} (PUT, copy, DELETE), {@link MultipartUploads}, {@link Buckets}, {@link Listing}. Reads go
 * through the local tier; writes go through it to the object store and drop the key's cached blocks. Thread-safe.
 */
public final class S3Service {
    /** The version id of every object: the stores behind ferry keep one version, as an unversioned S3 bucket. */
    static final String NULL_VERSION = "null";
    /** The one owner ferry answers for every bucket and object (it has no accounts): ID and display name. */
    static final String OWNER = "ferry";

    /** {@code <element><ID>ferry</ID><DisplayName>ferry</DisplayName></element>}. */
    static Xml owner(Xml x, String element) {
        return x.open(element).element("ID", OWNER).element("DisplayName", OWNER).close(element);
    }

    /** An ETag as S3 sends it: in quotes. */
    static String quote(String etag) {
        return "\"" + etag + "\"";
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

    private final NodeStores stores;
    private final ObjectReads reads;
    private final ObjectWrites writes;
    private final MultipartUploads multipart;
    private final Buckets buckets;
    private final Listing listing;

    private S3Service(NodeStores stores, ObjectReads reads, ObjectWrites writes, MultipartUploads multipart, Buckets buckets, Listing listing) {
        this.stores = stores;
        this.reads = reads;
        this.writes = writes;
        this.multipart = multipart;
        this.buckets = buckets;
        this.listing = listing;
    }

    /**
     * The S3 semantics over a node's {@code tiers}: reads and writes at their top, conditional writes checked under
     * the local tier; a copy's source lies in {@code spool} while it is written, and may be at most {@code maxCopyBytes}
     * (an object, or a part); {@code clock} is the node's; {@code peers} copies writes to a peer's disk and keeps peers'.
     */
    public static S3Service over(NodeStack tiers, Path spool, long maxCopyBytes, Clock clock, PeerLevel peers) {
        NodeStores stores = tiers.stores();
        // what write-back checks before it acknowledges a write
        WriteChecks checks = !stores.writesBack(false) ? null
                : new WriteChecks(stores.below(), tiers.origin().folder(), stores.writes(), Duration.ofSeconds(30), clock);
        KeyLocks locks = new KeyLocks();
        CopyOperations copies = new CopyOperations(stores::storeFor, spool, maxCopyBytes, clock);
        ObjectWrites writes = new ObjectWrites(stores, checks, locks, copies, tiers.origin(), peers);
        // under write-back the origin's uploads in progress are write-back's own: clients list the uploads they started
        MultipartUploads multipart = new MultipartUploads(stores, tiers.localMultipart(), checks, locks, copies, writes,
                stores.writesBack(false) ? null : tiers.origin().uploads());
        Listing listing = new Listing(stores::storeFor, (bucket, prefix) -> stores.isScratch(bucket) ? List.of()
                : stores.writes().pendingIn(bucket, prefix));
        return new S3Service(stores, new ObjectReads(stores, tiers.origin().parts()), writes, multipart,
                new Buckets(tiers.origin().buckets(), stores, checks), listing);
    }

    /** {@link ObjectReads#tryFast}: a GET or HEAD answered on the event loop (a hit of fresh metadata and resident blocks), or null. */
    public Reply tryFast(Request r) throws S3Error, IOException {
        return reads.tryFast(r);
    }

    /** Runs {@code r} (on a worker thread: the operations block on the stores) and answers it; an S3 error is thrown. */
    public Reply handle(Request r) throws S3Error, IOException {
        HttpMethod m = r.method();
        if (r.bucket() == null) {
            if (m.equals(HttpMethod.GET)) {
                return buckets.list(r);
            }
            throw S3Error.notImplemented(m + " /");
        }
        if (stores.isScratch(r.bucket()) && (r.has("uploads") || r.has("uploadId") || r.has("partNumber"))) {
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
            stores.storeFor(key.bucket()).head(key); // NoSuchKey as S3 answers it
            return Acls.policy();
        }
        if (m.equals(HttpMethod.GET) && r.has("attributes")) {
            return ObjectAttributesReply.of(r, reads.checksummed(key, stores.storeFor(key.bucket()).head(key), true));
        }
        if (m.equals(HttpMethod.PUT) && r.has("acl") && !r.headers().contains(CopyOperations.SOURCE)) {
            Acls.checkPut(r.headers(), r.body() == null ? new byte[0] : r.body().bytes());
            stores.storeFor(key.bucket()).head(key);
            return Reply.empty(HttpResponseStatus.OK);
        }
        if (m.equals(HttpMethod.GET) || m.equals(HttpMethod.HEAD)) {
            for (String unsupported : List.of("acl", "tagging", "attributes", "legal-hold", "retention", "torrent", "uploadId")) {
                if (r.has(unsupported)) {
                    throw S3Error.notImplemented(m + " object ?" + unsupported);
                }
            }
            if (r.has("partNumber")) {
                return reads.getPart(r, key, m.equals(HttpMethod.HEAD));
            }
            return reads.getObject(r, key, m.equals(HttpMethod.HEAD));
        }
        if (r.headers().contains(FerryHeaders.COPY_OF) && (m.equals(HttpMethod.PUT) || m.equals(HttpMethod.DELETE))) {
            return m.equals(HttpMethod.PUT) ? writes.keepCopy(r, key) : writes.releaseCopy(r, key); // a peer's write
        }
        if (m.equals(HttpMethod.PUT)) {
            if (r.headers().contains(CopyOperations.SOURCE)) {
                return r.has("uploadId") || r.has("partNumber") ? multipart.uploadPartCopy(r, key) : writes.copyObject(r, key);
            }
            if (r.has("uploadId") || r.has("partNumber")) {
                return multipart.uploadPart(r, key);
            }
            for (String unsupported : List.of("acl", "tagging", "retention", "legal-hold")) {
                if (r.has(unsupported)) {
                    throw S3Error.notImplemented("PUT object ?" + unsupported);
                }
            }
            return writes.putObject(r, key);
        }
        if (m.equals(HttpMethod.POST)) {
            if (r.has("uploads")) {
                return multipart.create(r, key);
            }
            if (r.has("uploadId")) {
                return multipart.complete(r, key);
            }
            throw S3Error.notImplemented("POST object without ?uploads or ?uploadId");
        }
        if (m.equals(HttpMethod.DELETE)) {
            return r.has("uploadId") ? multipart.abort(r, key) : writes.deleteObject(key);
        }
        throw S3Error.notImplemented(m + " object");
    }

    /** A request on a bucket (no key): create, head, list, delete, its ACL, location and uploads; DeleteObjects. */
    private Reply bucketOperation(Request r) throws S3Error, IOException {
        HttpMethod m = r.method();
        if (m.equals(HttpMethod.PUT) && r.query().isEmpty()) {
            return buckets.create(r.bucket());
        }
        if (m.equals(HttpMethod.HEAD) && r.query().isEmpty()) {
            stores.requireBucket(r.bucket());
            return new Reply.Full(HttpResponseStatus.OK, new DefaultHttpHeaders(), new byte[0], true);
        }
        if (m.equals(HttpMethod.GET)) {
            if (r.has("location")) {
                stores.requireBucket(r.bucket());
                return Reply.xml(HttpResponseStatus.OK, new Xml().openRoot("LocationConstraint").close("LocationConstraint"));
            }
            if (r.has("uploads")) {
                return multipart.list(r);
            }
            if (r.has("versions")) {
                return listing.listVersions(r);
            }
            if (r.has("acl")) {
                stores.requireBucket(r.bucket()); // NoSuchBucket as S3 answers it
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
            return writes.deleteObjects(r);
        }
        if (m.equals(HttpMethod.PUT) && r.has("acl") && r.query().size() == 1) {
            Acls.checkPut(r.headers(), r.body() == null ? new byte[0] : r.body().bytes());
            stores.requireBucket(r.bucket());
            return Reply.empty(HttpResponseStatus.OK);
        }
        if (m.equals(HttpMethod.DELETE) && r.query().isEmpty()) {
            return buckets.delete(r.bucket());
        }
        throw S3Error.notImplemented(m + " bucket" + (r.query().isEmpty() ? "" : " ?" + String.join("&", r.query().keySet())));
    }
}
