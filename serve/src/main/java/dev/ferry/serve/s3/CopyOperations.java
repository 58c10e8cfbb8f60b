package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.Keys;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.serve.protocol.Xml;
import dev.ferry.store.ByteRange;
import dev.ferry.store.Checksum;
import dev.ferry.store.CompletedPart;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.time.Clock;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The source side of CopyObject ({@code PUT} with {@code x-amz-copy-source}) and UploadPartCopy (the same
 * on {@code ?partNumber&uploadId}): parses the source, checks its {@code x-amz-copy-source-if-*}
 * conditions and the range, and reads the bytes once into a spool file; the caller writes that file as it
 * writes a PUT's body or a part, in whatever mode the daemon runs.
 *
 * <p>Why the daemon copies the bytes itself instead of asking the store to: the source may exist only in a
 * write-back copy on local disk (not yet in the store), the destination may be written back, and a folder
 * store has no copy operation; one path serves every mode. The source is read through the local tier
 * (a cached source costs no egress) and pinned to the ETag it had when checked.
 *
 * <p>Thread-safe.
 */
final class CopyOperations {
    static final String SOURCE = "x-amz-copy-source";
    private static final String RANGE = "x-amz-copy-source-range";

    private final java.util.function.Function<String, ObjectStore> stores;
    private final Path spoolDir;
    private final long maxCopyBytes;
    private final Clock clock;

    /**
     * @param stores       the store a bucket's objects are read through: the front of the daemon's chain (write-back
     *                     copies, the local tier), local disk for the scratch bucket
     * @param spoolDir     where a source's bytes are kept while they are written
     * @param maxCopyBytes the largest source (or source range) one request copies (S3's is 5 GiB)
     * @param clock        the time a copy answers as its LastModified
     */
    CopyOperations(java.util.function.Function<String, ObjectStore> stores, Path spoolDir, long maxCopyBytes, Clock clock) {
        this.stores = stores;
        this.spoolDir = spoolDir;
        this.maxCopyBytes = maxCopyBytes;
        this.clock = clock;
    }

    /** A copy's source bytes on local disk; closing deletes them. */
    record Source(ObjectKey key, ObjectMeta meta, Path file) implements Closeable {
        @Override
        public void close() throws IOException {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Checks a copy request and reads its source: the whole object for CopyObject, the
     * {@code x-amz-copy-source-range} (or the whole object when absent) for UploadPartCopy.
     */
    Source read(S3Service.Request r, ObjectKey destination, boolean part) throws S3Error, IOException {
        ObjectKey source = parseSource(r.headers().get(SOURCE));
        if (r.body() != null && r.body().size() > 0) {
            throw S3Error.badRequest("InvalidRequest", "a copy request takes its bytes from " + SOURCE + " and must have no body");
        }
        String rangeHeader = r.headers().get(RANGE);
        if (!part) {
            if (rangeHeader != null) {
                throw S3Error.invalidArgument(RANGE + " is for UploadPartCopy only: CopyObject copies the whole object");
            }
            String directive = r.headers().get("x-amz-metadata-directive");
            if (directive != null && !directive.equals("COPY") && !directive.equals("REPLACE")) {
                throw S3Error.invalidArgument("x-amz-metadata-directive must be COPY or REPLACE, not '" + Uris.abbreviate(directive) + "'");
            }
            if (source.equals(destination) && !"REPLACE".equals(directive)) {
                throw S3Error.badRequest("InvalidRequest", "this copy request is illegal because it copies " + destination
                        + " to itself without changing anything (send x-amz-metadata-directive: REPLACE to rewrite it)");
            }
        }
        ObjectStore store = stores.apply(source.bucket());
        ObjectMeta meta = store.head(source);
        checkConditions(r.headers(), meta, source);
        ByteRange range = part ? range(rangeHeader, meta) : null;
        long length = range == null ? meta.size() : range.length();
        if (length > maxCopyBytes) {
            throw S3Error.badRequest("InvalidRequest", "the copy source " + source + " is " + length + " bytes, over the "
                    + maxCopyBytes + " bytes one request may copy" + (part ? "" : ": copy it in parts (UploadPartCopy with ranges)"));
        }
        Files.createDirectories(spoolDir);
        Path file = Files.createTempFile(spoolDir, "copy-", ".tmp");
        try {
            if (length > 0) {
                try (ObjectContent content = store.get(new GetRequest(source, range, meta.etag()));
                        OutputStream out = Files.newOutputStream(file)) {
                    long copied = content.stream().transferTo(out);
                    if (copied != length) {
                        throw new IOException("the copy source " + source + " yielded " + copied + " of " + length + " bytes");
                    }
                }
            }
            return new Source(source, meta, file);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(file);
            throw e;
        }
    }

    /**
     * {@code /bucket/key} or {@code bucket/key}, percent-encoded; {@code ?versionId=null} is the current version,
     * any other version is refused, as on every other operation.
     */
    static ObjectKey parseSource(String header) throws S3Error {
        if (header == null || header.isBlank()) {
            throw S3Error.invalidArgument(SOURCE + " is empty: it names the source as /bucket/key");
        }
        String s = header.trim();
        int q = s.indexOf('?');
        if (q >= 0) {
            String query = s.substring(q + 1);
            if (!query.startsWith("versionId=")) {
                throw S3Error.invalidArgument(SOURCE + " may only carry ?versionId=, not '" + Uris.abbreviate(s.substring(q)) + "'");
            }
            if (!query.equals("versionId=" + S3Service.NULL_VERSION)) {
                throw S3Error.notImplemented(SOURCE + " with a versionId other than 'null' (ferry serves the current version only)");
            }
            s = s.substring(0, q);
        }
        String path = Uris.decode(s.startsWith("/") ? s.substring(1) : s);
        int slash = path.indexOf('/');
        if (slash <= 0 || slash == path.length() - 1) {
            throw S3Error.invalidArgument(SOURCE + " must name a bucket and a key as /bucket/key, not '" + Uris.abbreviate(s) + "'");
        }
        return ObjectKey.of(Keys.bucket(path.substring(0, slash)), Keys.check(path.substring(slash + 1)));
    }

    /**
     * The {@code x-amz-copy-source-if-*} conditions: each failing one is 412 (including the two that a GET
     * would answer with 304), with RFC 9110's precedence as on a GET.
     */
    private static void checkConditions(HttpHeaders h, ObjectMeta meta, ObjectKey source) throws S3Error {
        HttpHeaders asRead = new DefaultHttpHeaders();
        for (String condition : new String[] {"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"}) {
            String v = h.get("x-amz-copy-source-" + condition.toLowerCase(Locale.ROOT));
            if (v != null) {
                asRead.set(condition, v);
            }
        }
        if (asRead.isEmpty()) {
            return;
        }
        boolean notModified;
        try {
            notModified = Preconditions.notModified(asRead, meta, source);
        } catch (S3Error e) {
            throw new S3Error(412, "PreconditionFailed", "the copy source's condition failed: " + e.getMessage());
        }
        if (notModified) {
            throw new S3Error(412, "PreconditionFailed", "the copy source's condition failed: " + source + " (ETag "
                    + S3Service.quote(meta.etag()) + ") matches x-amz-copy-source-if-none-match or was not modified since "
                    + "x-amz-copy-source-if-modified-since");
        }
    }

    /** UploadPartCopy's range: absent is the whole object; present must be {@code bytes=first-last} inside it. */
    private static ByteRange range(String header, ObjectMeta meta) throws S3Error {
        if (header == null) {
            return null;
        }
        String h = header.trim();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("bytes=(\\d{1,18})-(\\d{1,18})").matcher(h);
        if (!m.matches()) {
            throw S3Error.invalidArgument(RANGE + " must be bytes=first-last (both zero-based, inclusive), not '" + Uris.abbreviate(h) + "'");
        }
        long first = Long.parseLong(m.group(1));
        long last = Long.parseLong(m.group(2));
        if (first > last) {
            throw S3Error.invalidArgument(RANGE + " " + h + " ends before it starts");
        }
        if (last >= meta.size()) { // well formed, but not inside the source: what S3 answers a GET's Range so
            throw new S3Error(416, "InvalidRange", "The requested range is not satisfiable: " + RANGE + " " + h
                    + " is not within the copy source " + meta.key() + " of " + meta.size() + " bytes");
        }
        return ByteRange.of(first, last - first + 1);
    }

    /** CopyObject's answer, from the PUT's answer: its ETag (and durability header), now as the time. */
    Reply copied(Reply.Full put, Checksum checksum) {
        String etag = put.headers().get("ETag");
        Xml x = new Xml().openRoot("CopyObjectResult").element("LastModified", Listing.ISO.format(clock.now())).element("ETag", etag);
        if (checksum != null) {
            x.element(checksum.algorithm().element(), checksum.value()).element("ChecksumType", checksum.type().name());
        }
        Reply.Full reply = Reply.xml(HttpResponseStatus.OK, x.close("CopyObjectResult"));
        copyHeaders(put.headers(), reply.headers());
        return reply;
    }

    /** UploadPartCopy's answer. */
    Reply partCopied(CompletedPart part) {
        return Reply.xml(HttpResponseStatus.OK, new Xml().openRoot("CopyPartResult")
                .element("LastModified", Listing.ISO.format(clock.now())).element("ETag", S3Service.quote(part.etag()))
                .close("CopyPartResult"));
    }

    private static void copyHeaders(HttpHeaders from, HttpHeaders to) {
        String durability = from.get("x-ferry-durability");
        if (durability != null) {
            to.set("x-ferry-durability", durability);
        }
    }
}
