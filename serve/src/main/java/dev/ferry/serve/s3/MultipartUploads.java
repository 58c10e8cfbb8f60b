package dev.ferry.serve.s3;

import dev.ferry.tier.NodeStores;
import dev.ferry.serve.node.LocalMultipart;
import dev.ferry.serve.protocol.ObjectHeaders;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.RequestBody;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Xml;
import dev.ferry.serve.s3.S3Service.Request;
import dev.ferry.store.Checksum;
import dev.ferry.store.CompletedPart;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.PendingUploads;
import dev.ferry.store.PutBody;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.w3c.dom.Element;

/**
 * The multipart upload operations: create, upload a part (or copy one), complete, abort and list. Under write-back
 * an upload is staged on local disk ({@link LocalMultipart}) and its completed object written back as a PUT's
 * body is; otherwise the upload goes to the top of the stack. A Complete takes the key's lock as a PUT does.
 * Thread-safe.
 */
final class MultipartUploads {
    private final NodeStores stores;
    /** Uploads staged on local disk under write-back, or null. */
    private final LocalMultipart localMultipart;
    /** What write-back checks before acknowledging (null without write-back). */
    private final WriteChecks checks;
    private final KeyLocks locks;
    private final CopyOperations copies;
    private final ObjectWrites writes;
    /** Where a bucket's uploads in progress are listed from. */
    private final List<MultipartListing.Source> sources;

    /** {@code localMultipart}: uploads staged on local disk under write-back, or null; {@code originUploads}: the origin's uploads in progress when it can list them (a folder store), else null. */
    MultipartUploads(NodeStores stores, LocalMultipart localMultipart, WriteChecks checks, KeyLocks locks, CopyOperations copies,
            ObjectWrites writes, PendingUploads originUploads) {
        this.stores = stores;
        this.localMultipart = localMultipart;
        this.checks = checks;
        this.locks = locks;
        this.copies = copies;
        this.writes = writes;
        List<MultipartListing.Source> sources = new ArrayList<>();
        if (localMultipart != null) {
            sources.add(localMultipart::list);
        }
        if (originUploads != null) {
            sources.add(originUploads::listUploads);
        }
        this.sources = List.copyOf(sources);
    }

    /**
     * CreateMultipartUpload: staged on local disk under write-back (checked first, as a PUT is), else started at the
     * top of the stack; the checksum it declares, if any, is answered back.
     */
    Reply create(Request r, ObjectKey key) throws S3Error, IOException {
        ObjectAttributes attributes = ObjectHeaders.from(r.headers());
        Checksum declared = declaredChecksum(r.headers());
        if (declared != null) {
            attributes = declared.applyTo(attributes);
        }
        MultipartUpload u;
        if (!stores.isScratch(key.bucket())) {
            writes.refuseUnstorableKey(key, 1, "a multipart upload", true); // it has bytes, or nothing to complete
        }
        if (stores.writesBack(ObjectWrites.through(r)) && localMultipart != null) {
            checks.check(key, attributes); // refused now, not after the parts are in
            u = localMultipart.start(key, attributes);
        } else {
            u = stores.multipart().startMultipart(key, attributes);
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

    /** AbortMultipartUpload: 204. */
    Reply abort(Request r, ObjectKey key) throws S3Error, IOException {
        MultipartUpload u = new MultipartUpload(key, uploadId(r));
        if (LocalMultipart.owns(u.uploadId()) && localMultipart != null) {
            localMultipart.abort(u);
        } else {
            stores.multipart().abortMultipart(u);
        }
        return Reply.empty(HttpResponseStatus.NO_CONTENT);
    }

    /** ListMultipartUploads of a bucket: those staged locally and the origin's, when it can list them. */
    Reply list(Request r) throws S3Error, IOException {
        if (sources.isEmpty()) {
            throw S3Error.notImplemented("ListMultipartUploads on this upstream");
        }
        stores.requireBucket(r.bucket()); // NoSuchBucket as S3 answers it
        return MultipartListing.list(r, sources);
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

    /** UploadPart: the body stored as the part, with the checksum it was sent with. */
    Reply uploadPart(Request r, ObjectKey key) throws S3Error, IOException {
        String id = uploadId(r);
        int part = partNumber(r.param("partNumber"));
        RequestBody body = ObjectWrites.requireBody(r);
        Checksum checksum = body.checksum(); // goes with the part to a store that keeps it (S3); the folder store computes its own
        PutBody data = PutBody.ofFile(body.file());
        CompletedPart done = storePart(new MultipartUpload(key, id), part,
                checksum == null ? data : data.withAttributes(checksum.applyTo(ObjectAttributes.NONE)));
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("ETag", S3Service.quote(done.etag()));
        if (checksum != null) {
            h.set(checksum.algorithm().header(), checksum.value());
        }
        return new Reply.Full(HttpResponseStatus.OK, h, new byte[0], false);
    }

    /** UploadPartCopy: a range of the source (or all of it) stored as the part. */
    Reply uploadPartCopy(Request r, ObjectKey key) throws S3Error, IOException {
        String id = uploadId(r);
        int part = partNumber(r.param("partNumber"));
        try (CopyOperations.Source source = copies.read(r, key, true)) {
            return copies.partCopied(storePart(new MultipartUpload(key, id), part, PutBody.ofFile(source.file())));
        }
    }

    private CompletedPart storePart(MultipartUpload upload, int part, PutBody data) throws IOException {
        return LocalMultipart.owns(upload.uploadId()) && localMultipart != null
                ? localMultipart.uploadPart(upload, part, data)
                : stores.multipart().uploadPart(upload, part, data);
    }

    static int partNumber(String text) throws S3Error {
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

    /** CompleteMultipartUpload, under the key's lock as a PUT: its parts checked, in order, and assembled. */
    Reply complete(Request r, ObjectKey key) throws S3Error, IOException {
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
            writes.checkWrite(r, key);
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
                durability = stores.writes().pending(key) ? "local" : "durable";
                checksum = checksumIfStill(key, etag);
            } else {
                checks.check(key);
                LocalMultipart.Assembled whole = localMultipart.assemble(upload, parts);
                // on failure the assembled object stays for a retry
                NodeStores.Written w = stores.putParts(key, whole.body(), whole.partSizes(), whole.etag());
                localMultipart.finish(upload, w.etag());
                durability = w.durable() ? "durable" : "local";
                etag = w.etag();
                checksum = Checksum.of(whole.body().attributes());
            }
        } else {
            ObjectMeta meta = stores.multipart().completeMultipart(upload, parts);
            etag = meta.etag();
            checksum = Checksum.of(meta.attributes());
        }
        Xml x = new Xml().openRoot("CompleteMultipartUploadResult")
                .element("Location", "/" + key.bucket() + "/" + key.key()).element("Bucket", key.bucket()).element("Key", key.key())
                .element("ETag", S3Service.quote(etag));
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
            ObjectMeta now = stores.top().head(key);
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
                    + algorithm.name().toLowerCase(Locale.ROOT) + " checksum algorithm.");
        }
        if (type == Checksum.Type.COMPOSITE && algorithm == Checksum.Algorithm.CRC64NVME) {
            throw S3Error.badRequest("InvalidRequest", "The COMPOSITE checksum type cannot be used with the crc64nvme checksum algorithm.");
        }
        return Checksum.declared(algorithm, type);
    }
}
