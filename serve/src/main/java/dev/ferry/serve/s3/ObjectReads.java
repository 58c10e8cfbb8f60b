package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.FerryHeaders;
import dev.ferry.serve.protocol.ObjectHeaders;
import dev.ferry.serve.protocol.Ranges;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.s3.S3Service.Request;
import dev.ferry.store.ByteRange;
import dev.ferry.store.Checksum;
import dev.ferry.store.GetRequest;
import dev.ferry.store.GetRequest.Reach;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.PartRanges;
import dev.ferry.store.Parts;
import dev.ferry.store.StoreException;
import dev.ferry.tier.NodeStores;
import dev.ferry.tier.TierHints;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;

/**
 * GetObject and HeadObject, of a whole object, a range or a part ({@code ?partNumber}): the reply's headers from
 * the object's metadata (conditions, overrides, range, checksum), and its bytes through the node's door: from the
 * local tier's block files when they are all on disk (sendfile), else streamed. The local tier's metadata is looked
 * up once per request. A GET of an object the local tier does not know is one ranged read whose answer is the
 * metadata too. Thread-safe.
 */
final class ObjectReads {
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);
    /** The header a daemon sends another to read only what that one holds on disk (never fetching). */
    private static final String CACHED_ONLY = FerryHeaders.CACHED_ONLY;

    private final NodeStores stores;
    private final TierHints hints;
    /** Where the origin's parts lie, for a part's read of an object the local stores did not assemble (S3), or null. */
    private final PartRanges originParts;

    ObjectReads(NodeStores stores, PartRanges originParts) {
        this.stores = stores;
        this.hints = stores.hints();
        this.originParts = originParts;
    }

    /**
     * A GET or HEAD answered without blocking, or null: the common case of a hit, when the object's
     * metadata is fresh in the cache and every block of the read is on local disk. Runs on the event loop,
     * saving two thread hand-offs per request; everything else goes to a worker thread ({@link S3Service#handle}).
     */
    Reply tryFast(Request r) throws S3Error, IOException {
        boolean head = r.method().equals(HttpMethod.HEAD);
        if (r.bucket() == null || r.key() == null || !(head || r.method().equals(HttpMethod.GET)) || !r.query().isEmpty()) {
            return null;
        }
        ObjectKey key = ObjectKey.of(r.bucket(), r.key());
        if (stores.onlyLocal(key)) {
            return null;
        }
        ObjectMeta meta = hints.freshMeta(key);
        if (meta == null) {
            return null;
        }
        if (head && ObjectHeaders.checksumWanted(r.headers())) {
            return null; // a HEAD may ask upstream for the checksum (TierHints.withChecksum): not on the event loop
        }
        if (wholeChecksumWanted(r)) {
            meta = hints.withChecksum(key, meta, false);
        }
        return answer(r, meta, head, Reach.CACHED_NOW, null, null);
    }

    /** GET or HEAD of an object: its metadata, then its bytes (a GET of an object the local tier does not know reads both at once). */
    Reply getObject(Request r, ObjectKey key, boolean head) throws S3Error, IOException {
        if (r.headers().contains(CACHED_ONLY)) {
            String ifMatch = r.headers().get("If-Match");
            ObjectMeta known = ifMatch == null ? hints.freshMeta(key) : hints.knownMeta(key, ObjectMeta.stripQuotes(ifMatch.trim()));
            Reply reply = known == null || stores.onlyLocal(key) ? null : answer(r, known, head, Reach.CACHED, null, null);
            if (reply == null) {
                throw new S3Error(404, "NotCached", key + " is not on this daemon's disk (asked for cached blocks only)");
            }
            return reply;
        }
        boolean local = stores.onlyLocal(key);
        ObjectMeta meta = local ? null : hints.freshMeta(key);
        if (meta == null && !head && !local) {
            Reply read = readUnknown(r, key);
            if (read != null) {
                return read;
            }
        }
        if (meta == null) {
            meta = headOf(key, head, local);
        }
        if (head ? ObjectHeaders.checksumWanted(r.headers()) : wholeChecksumWanted(r)) {
            meta = checksummed(key, meta, head);
        }
        return answer(r, meta, head, Reach.ANYWHERE, null, null);
    }

    /**
     * The object's metadata as the door answers it; a GET's 404 names whether the key or its bucket is missing.
     * {@code local}: its one copy is on this node.
     */
    private ObjectMeta headOf(ObjectKey key, boolean head, boolean local) throws IOException {
        try {
            return stores.storeFor(key.bucket()).head(key);
        } catch (ObjectNotFoundException e) {
            if (!head && !local) {
                // a HEAD's 404 has no body: an upstream cannot say whether the key or its bucket is missing; a GET names which.
                // A delete acknowledged here and not made in the store yet is known to be in a bucket that exists: no need to ask
                stores.requireBucket(key.bucket());
            }
            throw e;
        }
    }

    /**
     * Whether a read asks for the object's checksum ({@code x-amz-checksum-mode}) where one is answered: of the whole
     * object. A range is answered none, as S3 answers it, so nothing is asked upstream for it.
     */
    private static boolean wholeChecksumWanted(Request r) {
        return ObjectHeaders.checksumWanted(r.headers()) && !r.headers().contains("Range");
    }

    /**
     * {@code meta} with its checksum where the store keeps one, for a client that asks for it: asked for now when
     * {@code wait} (a HEAD), in the background for a read ({@link TierHints#withChecksum}).
     */
    ObjectMeta checksummed(ObjectKey key, ObjectMeta meta, boolean wait) throws IOException {
        if (stores.onlyLocal(key)) {
            return meta; // a local copy's metadata is all there is
        }
        return hints.withChecksum(key, meta, wait);
    }

    /**
     * A GET of an object whose metadata the local tier does not hold fresh and whose one copy is not on this node
     * (write-back, scratch): the read itself asks upstream, one ranged GET whose answer is the metadata, with no HEAD
     * before it (a miss is one request). Null where a HEAD comes first: a suffix or multi-range (where it starts
     * depends on the size), a client revalidating its copy ({@code If-None-Match}, {@code If-Modified-Since}: a 304
     * needs no bytes), a range that upstream finds past the end (answered 416 by the usual path). A client asking for
     * the checksum ({@code x-amz-checksum-mode}, which boto3 and the AWS SDKs send on every GET by default) of a whole
     * object is answered it from the miss's own GET, which is then of the whole object
     * ({@link GetRequest#withChecksum}); a client asking for it with a range is answered none, as S3 answers a range.
     */
    private Reply readUnknown(Request r, ObjectKey key) throws S3Error, IOException {
        if (r.headers().contains("If-None-Match") || r.headers().contains("If-Modified-Since")) {
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
            GetRequest get = new GetRequest(key, asked, null);
            content = stores.get(wholeChecksumWanted(r) ? get.withChecksum() : get);
        } catch (ObjectNotFoundException e) {
            // a store's 404 may mean the key or its bucket: S3 names which
            stores.requireBucket(key.bucket());
            throw e;
        } catch (StoreException e) {
            if (e.httpStatus() == 416) {
                return null;
            }
            throw e;
        }
        return answer(r, content.meta(), false, Reach.ANYWHERE, null, content);
    }

    /**
     * GET or HEAD {@code ?partNumber=N}: the bytes of part N of an object a multipart upload made (206, its
     * {@code Content-Range}, {@code x-amz-mp-parts-count}), as a ranged read; part 1 of any other object is all of
     * it (206 too, without a part count). A part that is not there is 400 InvalidPart. Where the part lies comes
     * from the sizes the local stores keep, else from the origin (S3); an origin that cannot tell (s3proxy) makes
     * it 501.
     */
    Reply getPart(Request r, ObjectKey key, boolean head) throws S3Error, IOException {
        int n = MultipartUploads.partNumber(r.param("partNumber"));
        if (r.headers().contains("Range")) {
            throw S3Error.badRequest("InvalidRequest", "Cannot specify both Range header and partNumber query parameter");
        }
        ObjectMeta meta = stores.storeFor(key.bucket()).head(key);
        if (ObjectHeaders.checksumWanted(r.headers())) {
            meta = checksummed(key, meta, head);
        }
        int count = ObjectAttributesReply.partsCount(meta.etag());
        if (n > Math.max(count, 1)) {
            throw S3Error.badRequest("InvalidPart", "The requested partnumber is not satisfiable: " + key + " has "
                    + Math.max(count, 1) + (count > 1 ? " parts" : " part") + ", not " + n);
        }
        if (count == 0) { // the one part is the whole object, answered as a range of all of it (206), as S3 does
            return answer(r, meta, head, Reach.ANYWHERE, meta.size() == 0 ? null : ByteRange.of(0, meta.size()), null);
        }
        List<Long> sizes = Parts.sizes(meta.attributes());
        ByteRange part = sizes != null && sizes.size() == count ? Parts.range(sizes, n)
                : originParts != null && !stores.onlyLocal(key)
                        ? originParts.partRange(key, meta.etag(), n) : null;
        if (part == null) {
            throw S3Error.notImplemented("GET ?partNumber of " + key + " (its store does not tell where its parts lie; read the part with a Range)");
        }
        Reply reply = answer(r, meta, head, Reach.ANYWHERE, part, null);
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
     * GET or HEAD of {@code meta} (of {@code part} of it, when not null: a part's read, its range whatever the request's
     * Range), its bytes going only as far as {@code reach}: null when they would have to go further (upstream, or
     * reading a block to check it). Answered from {@code opened} (a read of {@code meta} already open, closed here unless
     * it is the reply's) when it holds just the bytes the reply sends.
     */
    private Reply answer(Request r, ObjectMeta meta, boolean head, Reach reach, ByteRange part, ObjectContent opened)
            throws S3Error, IOException {
        try {
            return answerFrom(r, meta, head, reach, part, opened);
        } catch (S3Error | IOException | RuntimeException e) {
            closeUnused(opened);
            throw e;
        }
    }

    private Reply answerFrom(Request r, ObjectMeta meta, boolean head, Reach reach, ByteRange part, ObjectContent opened)
            throws S3Error, IOException {
        ObjectKey key = meta.key();
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
        GetRequest get = GetRequest.of(meta, range);
        ObjectContent resident = stores.get(get.reaching(reach == Reach.CACHED_NOW ? Reach.CACHED_NOW : Reach.CACHED));
        if (resident != null) {
            return new Reply.Files(status, h, resident);
        }
        if (reach != Reach.ANYWHERE) {
            return null; // on the event loop (tryFast), or a peer asking for cached blocks only: not from upstream
        }
        ObjectContent content = stores.get(get);
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
        h.set("ETag", S3Service.quote(meta.etag()));
        h.set("Last-Modified", HTTP_DATE.format(meta.lastModified()));
        h.set("Accept-Ranges", "bytes");
        ObjectHeaders.apply(meta.attributes(), h);
        return h;
    }
}
