package dev.ferry.serve.s3;

import dev.ferry.tier.NodeStores;
import dev.ferry.serve.node.Origin;
import dev.ferry.serve.node.PeerLevel;
import dev.ferry.serve.protocol.FerryHeaders;
import dev.ferry.serve.protocol.Keys;
import dev.ferry.serve.protocol.ObjectHeaders;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.RequestBody;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.serve.protocol.Xml;
import dev.ferry.serve.s3.S3Service.Request;
import dev.ferry.store.Checksum;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.Parts;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.w3c.dom.Element;

/**
 * PutObject, CopyObject, DeleteObject and DeleteObjects: each write of a key under the key's lock, from its
 * precondition check ({@code If-Match}, {@code If-None-Match}) to its commit, so that no other write of the key
 * comes between. A write goes to the scratch bucket, to write-back (acknowledged once on local disk, checked first
 * for what would fail its upload forever), or through the local tier to the store, and drops the key's cached
 * blocks. Thread-safe.
 */
final class ObjectWrites {
    private final NodeStores stores;
    /** What write-back checks before acknowledging (null without write-back). */
    private final WriteChecks checks;
    private final KeyLocks locks;
    private final CopyOperations copies;
    /** The store at the bottom: keys it cannot hold are refused ({@link #refuseUnstorableKey}), as they would be lost. */
    private final Origin origin;
    /** Copies of writes on a peer's disk ({@code x-ferry-durability: peer}), and the copies this node keeps for peers. */
    private final PeerLevel peers;

    ObjectWrites(NodeStores stores, WriteChecks checks, KeyLocks locks, CopyOperations copies, Origin origin, PeerLevel peers) {
        this.stores = stores;
        this.checks = checks;
        this.locks = locks;
        this.copies = copies;
        this.origin = origin;
        this.peers = peers;
    }

    /**
     * Checks a write's {@code If-Match} / {@code If-None-Match} against the object as it is now: the local
     * copy of a write not yet uploaded, else the store under the local tier. Call under the key's lock.
     */
    void checkWrite(Request r, ObjectKey key) throws S3Error, IOException {
        if (!Preconditions.conditionalWrite(r.headers())) {
            return;
        }
        ObjectMeta current;
        try {
            current = stores.isScratch(key.bucket()) ? stores.scratch().head(key)
                    : stores.writes().pending(key) ? stores.top().head(key) : stores.below().head(key);
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

    /** PutObject: the body, with the headers and verified checksum it came with, written under the key's lock. */
    Reply putObject(Request r, ObjectKey key) throws S3Error, IOException {
        RequestBody body = requireBody(r);
        ObjectAttributes attributes = ObjectHeaders.from(r.headers());
        if (body.checksum() != null) { // verified: kept with the object, as S3 keeps it
            attributes = body.checksum().applyTo(attributes);
        }
        PutBody data = body.putBody().withAttributes(attributes); // the journal may take the spool over
        Reply.Full reply = locks.with(key, () -> {
            checkWrite(r, key);
            return put(r, key, data);
        });
        ObjectHeaders.applyChecksum(attributes, reply.headers());
        return reply;
    }

    /** CopyObject: the source's bytes written as a PUT's body would be (conditions, lock, write-back included). */
    Reply copyObject(Request r, ObjectKey key) throws S3Error, IOException {
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
     * Refuses, before anything is written or acknowledged, a key the embedded store cannot hold as S3 would: bytes
     * for a key it would keep as an empty folder (one ending in '/'), and a key with a segment longer than a file
     * name ({@code 400 KeyTooLongError}, as the store itself answers). S3 takes such keys, and so does ferry over
     * S3; empty ones ending in '/' ("folder markers") are taken everywhere but a folder store.
     */
    void refuseUnstorableKey(ObjectKey key, long length, String what, boolean multipart) throws S3Error {
        if (!origin.keepsKeysAsFiles()) {
            return;
        }
        if (length > 0 && key.key().endsWith("/")) {
            throw S3Error.badRequest("InvalidRequest", "the embedded store keeps a key ending in '/' as a folder, which holds no bytes: "
                    + what + " to " + key + " would be lost, so nothing was written (such a key may only be written empty)");
        }
        String why = origin.whyUnstorable(key.key(), multipart);
        if (why != null) {
            throw S3Error.badRequest("KeyTooLongError", why + "; nothing was written");
        }
    }

    private Reply.Full put(Request r, ObjectKey key, PutBody data) throws S3Error, IOException {
        HttpHeaders h = new DefaultHttpHeaders();
        if (!stores.isScratch(key.bucket())) {
            refuseUnstorableKey(key, data.length(), data.length() + " bytes", false);
        }
        String level = askedLevel(r);
        boolean through = through(r) || "durable".equals(level);
        if (stores.writesBack(through) && !stores.isScratch(key.bucket())) {
            checks.check(key, data.attributes()); // what would fail forever is refused now, not acknowledged
        }
        String after = r.headers().get(FerryHeaders.AFTER);
        boolean peer = "peer".equals(level);
        String answered;
        if (peer) {
            peers.holdUploads(key); // the copy first: the upload would share the disk and the CPU with it
        }
        try {
            NodeStores.Written w;
            try {
                // an earlier write of this key still local: this one lands after it (the door waits for the fence)
                w = after == null ? stores.put(key, data, through, Duration.ofMinutes(10))
                        : stores.putAfter(key, data, after, through, Duration.ofMinutes(10));
            } catch (StoreException e) {
                throw damagedOnTheWay(key, e);
            }
            h.set("ETag", S3Service.quote(w.etag()));
            answered = w.durable() ? "durable" : "local"; // scratch: local, and never more
            if (peer && !w.durable() && w.sequence() >= 0) {
                List<String> why = new ArrayList<>();
                String member = peers.copy(w.sequence(), why);
                if (member != null) {
                    answered = member.equals("durable") ? "durable" : "peer";
                    h.set("x-ferry-peer", member);
                } else {
                    h.set("x-ferry-peer-error", Uris.abbreviate("no peer holds a copy: " + String.join("; ", why)));
                }
            }
        } finally {
            if (peer) {
                peers.resumeUploads(key);
            }
        }
        h.set("x-ferry-durability", answered);
        return new Reply.Full(HttpResponseStatus.OK, h, new byte[0], false);
    }

    /** The level a writer asks for ({@code x-ferry-durability}: local, peer or durable), or null. */
    private static String askedLevel(Request r) throws S3Error {
        String level = r.headers().get("x-ferry-durability");
        if (level == null) {
            return null;
        }
        level = level.trim().toLowerCase(java.util.Locale.ROOT);
        if (!level.equals("local") && !level.equals("peer") && !level.equals("durable")) {
            throw S3Error.invalidArgument("x-ferry-durability is local, peer or durable, not " + Uris.abbreviate(level));
        }
        return level;
    }

    /** A peer's write kept here until it is durable ({@code PUT} with {@code x-ferry-copy-of}): the bytes fsync'd, then 200. */
    Reply keepCopy(Request r, ObjectKey key) throws S3Error, IOException {
        RequestBody body = requireBody(r);
        HttpHeaders q = r.headers();
        long sequence;
        int crc;
        List<Long> parts;
        java.time.Instant written;
        try {
            sequence = Long.parseLong(q.get(FerryHeaders.COPY_SEQUENCE, ""));
            crc = Integer.parseInt(q.get(FerryHeaders.COPY_CRC32C, ""));
            parts = PeerLevel.parts(q.get(FerryHeaders.COPY_PARTS));
            String when = q.get(FerryHeaders.COPY_WRITTEN);
            written = when == null ? null : java.time.Instant.ofEpochMilli(Long.parseLong(when));
        } catch (NumberFormatException e) {
            throw S3Error.invalidArgument("a peer's copy names its sequence, CRC32C, part sizes and time as numbers");
        }
        String from = q.get(FerryHeaders.COPY_FROM);
        if (from == null) {
            throw S3Error.invalidArgument("a peer's copy names the daemon it comes from (" + FerryHeaders.COPY_FROM + ")");
        }
        peers.keep(q.get(FerryHeaders.COPY_OF), from, sequence, key, crc, q.get(FerryHeaders.COPY_ETAG), parts, ObjectHeaders.from(q),
                q.get(FerryHeaders.AFTER), written, body.putBody());
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("x-ferry-durability", "copy");
        return new Reply.Full(HttpResponseStatus.OK, h, new byte[0], false);
    }

    /** A peer's write is durable in the store ({@code DELETE} with {@code x-ferry-copy-of}): the copy kept here goes. */
    Reply releaseCopy(Request r, ObjectKey key) throws S3Error, IOException {
        long sequence;
        try {
            sequence = Long.parseLong(r.headers().get(FerryHeaders.COPY_SEQUENCE, ""));
        } catch (NumberFormatException e) {
            throw S3Error.invalidArgument("a peer's release names the write's sequence as a number");
        }
        peers.release(r.headers().get(FerryHeaders.COPY_OF), key, sequence);
        return Reply.empty(HttpResponseStatus.NO_CONTENT);
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

    /** Whether the writer asked for its write to go through to the store ({@code x-ferry-write: through}), past write-back. */
    static boolean through(Request r) {
        return "through".equals(r.headers().get("x-ferry-write"));
    }

    static RequestBody requireBody(Request r) throws S3Error {
        if (r.body() == null) {
            throw new S3Error(411, "MissingContentLength", "the request has no body; send Content-Length");
        }
        return r.body();
    }

    /** DeleteObject: 204; under write-back its durability says whether the delete waits behind a write not uploaded yet. */
    Reply deleteObject(ObjectKey key) throws S3Error, IOException {
        delete(key);
        Reply.Full deleted = Reply.empty(HttpResponseStatus.NO_CONTENT);
        if (stores.writesBack(false) && !stores.isScratch(key.bucket())) {
            // journaled behind a write not uploaded yet, or made in the store
            deleted.headers().set("x-ferry-durability", stores.writes().deletePending(key) ? "local" : "durable");
        }
        return deleted;
    }

    private void delete(ObjectKey key) throws S3Error, IOException {
        locks.with(key, () -> {
            stores.storeFor(key.bucket()).delete(key);
            return null;
        });
    }

    /**
     * DeleteObjects. The whole request is read before anything is deleted, so that a malformed or ambiguous
     * one (an {@code <Object>} with two {@code <Key>}s or {@code <VersionId>}s) deletes nothing. A version
     * id is taken as sent: {@code " null"} is not the null version.
     */
    Reply deleteObjects(Request r) throws S3Error, IOException {
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
        stores.requireBucket(r.bucket()); // a missing bucket fails it whole: NoSuchBucket
        Xml x = new Xml().openRoot("DeleteResult");
        for (Named o : named) {
            String k = o.key();
            try {
                String version = o.version();
                if (version != null && !version.equals(S3Service.NULL_VERSION)) {
                    throw S3Error.notImplemented("VersionId other than 'null' (ferry serves the current version only)");
                }
                delete(ObjectKey.of(r.bucket(), Keys.check(k)));
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
}
