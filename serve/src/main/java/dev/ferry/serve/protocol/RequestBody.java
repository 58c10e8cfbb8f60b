package dev.ferry.serve.protocol;

import dev.ferry.store.PutBody;
import io.netty.handler.codec.http.HttpHeaders;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Locale;
import java.util.zip.CRC32C;

/**
 * A request body as it arrives: decoded from {@code aws-chunked} when sent that way, checked against every
 * digest the client declared ({@code Content-MD5}, {@code x-amz-content-sha256},
 * {@code x-amz-checksum-crc32|crc32c|crc64nvme|sha1|sha256} as a header or a trailer) and held in memory (XML, small) or
 * spooled to a file (object data), within a size limit. Nothing is handed to a store until
 * {@link #finish} has checked it all. Not thread-safe: fed by one channel's event loop.
 */
public final class RequestBody implements AutoCloseable {
    private final long limit;
   private final Path file;
    private final FileChannel channel;
    private final ByteArrayOutputStream memory;
    private final AwsChunked chunked;
    private final MessageDigest rawSha256;
    private final String expectedSha256;
    private final MessageDigest md5;
    private byte[] md5Digest;
    private final CRC32C crc32c;
    private final String expectedMd5;
    private final dev.ferry.store.Checksum.Digest checksumDigest;
    private final String checksumHeader;
    private dev.ferry.store.Checksum verified;
    private final HttpHeaders headers;
    private final long declaredDecodedLength;
    private long size;

    /**
     * @param spoolDir where object data is spooled, or null to hold the body in memory
     * @param signed   the verified signature (its payload rules apply), or null when requests are not signed
     */
    public RequestBody(HttpHeaders headers, Path spoolDir, long limit, SigV4.Signed signed) throws S3Error, IOException {
        this(headers, spoolDir, limit, signed, true);
    }

    /**
     * @param bodyChecksum whether an {@code x-amz-checksum-*} header describes this body: not for a
     *                     CompleteMultipartUpload, whose checksum header is the object's
     */
    public RequestBody(HttpHeaders headers, Path spoolDir, long limit, SigV4.Signed signed, boolean bodyChecksum) throws S3Error, IOException {
        this.headers = headers;
        this.limit = limit;
        String contentSha = headers.get("x-amz-content-sha256", "");
        String encoding = headers.get("Content-Encoding", "").toLowerCase(Locale.ROOT);
        boolean isChunked = contentSha.startsWith("STREAMING-") || encoding.contains("aws-chunked");
        String decoded = headers.get("x-amz-decoded-content-length");
        if (isChunked && decoded == null) {
            throw new S3Error(411, "MissingContentLength", "an aws-chunked body needs x-amz-decoded-content-length");
        }
        try {
            declaredDecodedLength = decoded == null ? -1 : Long.parseLong(decoded);
        } catch (NumberFormatException e) {
            throw S3Error.invalidArgument("x-amz-decoded-content-length is not a number: " + decoded);
        }
        // refused from the headers, before 100 Continue: nothing of a body that cannot be taken is read
        long declared = declaredDecodedLength;
        if (!isChunked && headers.contains("Content-Length")) {
            try {
                declared = Long.parseLong(headers.get("Content-Length").trim());
            } catch (NumberFormatException e) {
                throw S3Error.badRequest("BadRequest", "Content-Length is not a number: " + Uris.abbreviate(headers.get("Content-Length")));
            }
        }
        if (declared > limit) {
            throw S3Error.badRequest("EntityTooLarge", "the body declares " + declared + " bytes, over the limit of " + limit
                    + (spoolDir != null ? " for one PUT or part; upload larger objects in parts" : ""));
        }
        String sha = signed != null ? signed.bodySha256() : null;
        if (sha == null && !isChunked && contentSha.length() == 64) {
            sha = contentSha; // unsigned requests that declare a digest get it checked too
        }
        expectedSha256 = sha == null ? null : sha.toLowerCase(Locale.ROOT);
        rawSha256 = expectedSha256 == null ? null : SigV4.sha256();
        expectedMd5 = headers.get("Content-MD5");
        // object data is hashed as it arrives (its ETag, its journal's CRC), so nothing reads it again to hash it
        // (a peer's copy of a write comes with its ETag and CRC32C: only the CRC is taken, to check it)
        md5 = expectedMd5 != null || (spoolDir != null && !headers.contains(FerryHeaders.COPY_OF)) ? digest("MD5") : null;
        crc32c = spoolDir != null ? new CRC32C() : null;
        String trailer = headers.get("x-amz-trailer", "").toLowerCase(Locale.ROOT).trim();
        dev.ferry.store.Checksum.Algorithm algorithm = null;
        for (dev.ferry.store.Checksum.Algorithm a : dev.ferry.store.Checksum.Algorithm.values()) {
            if (bodyChecksum && (headers.contains(a.header()) || trailer.equals(a.header()))) {
                if (algorithm != null) {
                    throw S3Error.badRequest("InvalidRequest", "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.");
                }
                algorithm = a;
            }
        }
        checksumHeader = algorithm == null ? null : algorithm.header();
        checksumDigest = algorithm == null ? null : algorithm.digest();
        AwsChunked.ChunkVerifier verifier = signed != null && signed.signedChunks() ? SigV4.chunkVerifier(signed) : null;
        chunked = isChunked ? new AwsChunked(this::payload, verifier) : null;
        if (spoolDir != null) {
            Files.createDirectories(spoolDir);
            file = Files.createTempFile(spoolDir, "body-", ".spool");
            channel = FileChannel.open(file, StandardOpenOption.WRITE);
            memory = null;
        } else {
            file = null;
            channel = null;
            memory = new ByteArrayOutputStream();
        }
    }

    private static MessageDigest digest(String name) {
        try {
            return MessageDigest.getInstance(name);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(name + " is not available", e);
        }
    }

    /** Bytes as they came off the wire (HTTP chunking already removed). */
    public void feed(ByteBuffer raw) throws S3Error, IOException {
        if (rawSha256 != null) {
            rawSha256.update(raw.duplicate());
        }
        if (chunked != null) {
            chunked.feed(raw);
        } else {
            payload(raw);
        }
    }

    private void payload(ByteBuffer data) throws S3Error {
        size += data.remaining();
        if (size > limit) {
            throw new S3Error(400, "EntityTooLarge", "the body is over the limit of " + limit + " bytes");
        }
        if (md5 != null) {
            md5.update(data.duplicate());
        }
        if (crc32c != null) {
            crc32c.update(data.duplicate());
        }
        if (checksumDigest != null) {
            checksumDigest.update(data.duplicate());
        }
        try {
            if (channel != null) {
                while (data.hasRemaining()) {
                    channel.write(data);
                }
            } else {
                byte[] b = new byte[data.remaining()];
                data.get(b);
                memory.write(b, 0, b.length);
            }
        } catch (IOException e) {
            String message = e.getMessage() != null && e.getMessage().contains("No space") ? "the daemon's disk is full" : e.getMessage();
            throw new S3Error(507, "InsufficientStorage", "cannot hold the request body: " + message);
        }
    }

    /** Checks length and digests once the last byte is in; the body is usable only after this. */
    public void finish() throws S3Error, IOException {
        if (chunked != null && !chunked.done()) {
            throw S3Error.badRequest("IncompleteBody", "the aws-chunked body ended before its final chunk");
        }
        if (declaredDecodedLength >= 0 && declaredDecodedLength != size) {
            throw S3Error.badRequest("IncompleteBody", "the body holds " + size + " bytes; x-amz-decoded-content-length said "
                    + declaredDecodedLength);
        }
        if (rawSha256 != null && !HexFormat.of().formatHex(rawSha256.digest()).equals(expectedSha256)) {
            throw S3Error.badRequest("XAmzContentSHA256Mismatch", "the body's SHA-256 does not match x-amz-content-sha256");
        }
        md5Digest = md5 == null ? null : md5.digest();
        if (expectedMd5 != null) {
            byte[] want;
            try {
                want = Base64.getDecoder().decode(expectedMd5.trim());
            } catch (IllegalArgumentException e) {
                throw S3Error.badRequest("InvalidDigest", "Content-MD5 is not base64: " + expectedMd5);
            }
            if (!MessageDigest.isEqual(want, md5Digest)) {
                throw S3Error.badRequest("BadDigest", "the body's MD5 does not match Content-MD5");
            }
        }
        if (checksumHeader != null) {
            String want = headers.get(checksumHeader);
            if (want == null && chunked != null) {
                want = chunked.trailers().get(checksumHeader);
            }
            if (want == null) {
                throw S3Error.badRequest("InvalidRequest", "the body announced a " + checksumHeader + " trailer but sent none");
            }
            dev.ferry.store.Checksum actual = dev.ferry.store.Checksum.full(checksumDigest.algorithm(), checksumDigest.finish());
            if (!actual.value().equals(want.trim())) {
                throw S3Error.badRequest("BadDigest", "the body's " + checksumHeader.substring("x-amz-checksum-".length())
                        + " checksum does not match " + checksumHeader);
            }
            verified = actual;
        }
        if (channel != null) {
            channel.close(); // not synced: whoever keeps the bytes syncs them where it keeps them
        }
    }

    /** The body's checksum that the client declared and {@link #finish} verified (FULL_OBJECT), or null. */
    public dev.ferry.store.Checksum checksum() {
        return verified;
    }

    public long size() {
        return size;
    }

    /** The spooled file (object data), after {@link #finish}. */
    public Path file() {
        return file;
    }

    /**
     * The spooled object data as a write's body, after {@link #finish}: the file with the MD5 (none for a peer's copy,
     * which carries its ETag) and CRC32C of its bytes,
     * which a journal on the same disk may take over (moved, not copied); what is left is deleted by {@link #close}.
     */
    public PutBody putBody() throws IOException {
        if (file == null || crc32c == null) {
            throw new IllegalStateException("only spooled object data, once finished, is a write's body");
        }
        return PutBody.ofSpool(new PutBody.Spool(file, (int) crc32c.getValue(), md5Digest == null ? null : HexFormat.of().formatHex(md5Digest)));
    }

    /** The body held in memory (XML), after {@link #finish}. */
    public byte[] bytes() {
        return memory == null ? new byte[0] : memory.toByteArray();
    }

    @Override
    public void close() {
        try {
            if (channel != null) {
                channel.close();
            }
            if (file != null) {
                Files.deleteIfExists(file);
            }
        } catch (IOException ignored) {
            // a spool file left behind is removed when the daemon starts
        }
    }
}
