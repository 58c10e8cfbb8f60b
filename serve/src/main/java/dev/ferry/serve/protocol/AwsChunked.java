package dev.ferry.serve.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Decodes an {@code aws-chunked} body as it arrives: {@code hex-size[;chunk-signature=sig]\r\n data \r\n}
 * chunks, a zero-size chunk, then optional trailer lines ({@code x-amz-checksum-crc32:...}) and an empty
 * line. Payload bytes go to the sink; each chunk's signature, when the client signed chunks, goes to the
 * {@link ChunkVerifier} with the chunk's bytes. Not thread-safe: one request's bytes, in order.
 */
public final class AwsChunked {
    private static final int MAX_LINE = 4096;
    private static final long MAX_CHUNK = 1L << 32;

    interface Sink {
        void write(ByteBuffer payload) throws S3Error;
    }

    /** Checks signed chunks (STREAMING-AWS4-HMAC-SHA256-PAYLOAD); see {@link SigV4}. */
    interface ChunkVerifier {
        void chunkStarted();

        void chunkData(ByteBuffer data);

        void chunkEnded(String signature) throws S3Error;

        void trailer(Map<String, String> trailers, String signature) throws S3Error;
    }

    private enum State { SIZE_LINE, DATA, DATA_END, TRAILER, DONE }

    private final Sink sink;
    private final ChunkVerifier verifier;
    private final StringBuilder line = new StringBuilder();
    private final Map<String, String> trailers = new LinkedHashMap<>();
    private String trailerSignature;
    private State state = State.SIZE_LINE;
    private long remaining;
    private String signature;
    private int endBytes;

    AwsChunked(Sink sink, ChunkVerifier verifier) {
        this.sink = sink;
        this.verifier = verifier;
    }

    Map<String, String> trailers() {
        return trailers;
    }

    boolean done() {
        return state == State.DONE;
    }

    void feed(ByteBuffer in) throws S3Error {
        while (in.hasRemaining()) {
            switch (state) {
                case SIZE_LINE -> {
                    String l = readLine(in);
                    if (l != null) {
                        startChunk(l);
                    }
                }
                case DATA -> {
                    int n = (int) Math.min(remaining, in.remaining());
                    ByteBuffer slice = in.slice(in.position(), n);
                    if (verifier != null) {
                        verifier.chunkData(slice.duplicate());
                    }
                    sink.write(slice);
                    in.position(in.position() + n);
                    remaining -= n;
                    if (remaining == 0) {
                        state = State.DATA_END;
                        endBytes = 0;
                    }
                }
                case DATA_END -> {
                    byte b = in.get();
                    if ((endBytes == 0 && b != '\r') || (endBytes == 1 && b != '\n')) {
                        throw malformed("a chunk's data is not followed by CRLF");
                    }
                    if (++endBytes == 2) {
                        endChunk();
                        state = State.SIZE_LINE;
                    }
                }
                case TRAILER -> {
                    String l = readLine(in);
                    if (l == null) {
                        break;
                    }
                    if (l.isEmpty()) {
                        if (verifier != null) {
                            verifier.trailer(trailers, trailerSignature);
                        }
                        state = State.DONE;
                    } else {
                        int colon = l.indexOf(':');
                        if (colon <= 0) {
                            throw malformed("a trailer line has no ':': " + l);
                        }
                        String name = l.substring(0, colon).trim().toLowerCase(java.util.Locale.ROOT);
                        String value = l.substring(colon + 1).trim();
                        if (name.equals("x-amz-trailer-signature")) {
                            trailerSignature = value;
                        } else {
                            trailers.put(name, value);
                        }
                    }
                }
                case DONE -> throw malformed("bytes follow the end of the body");
            }
        }
    }

    private void startChunk(String l) throws S3Error {
        int semi = l.indexOf(';');
        String hex = (semi < 0 ? l : l.substring(0, semi)).trim();
        signature = null;
        if (semi >= 0) {
            String ext = l.substring(semi + 1).trim();
            if (!ext.startsWith("chunk-signature=")) {
                throw malformed("unknown chunk extension: " + ext);
            }
            signature = ext.substring("chunk-signature=".length());
        }
        try {
            remaining = Long.parseLong(hex, 16);
        } catch (NumberFormatException e) {
            throw malformed("a chunk size is not hexadecimal: '" + hex + "'");
        }
        if (remaining < 0 || remaining > MAX_CHUNK) {
            throw malformed("a chunk size is out of range: " + hex);
        }
        if (verifier != null) {
            verifier.chunkStarted();
        }
        if (remaining == 0) {
            if (verifier != null) {
                verifier.chunkEnded(signature);
            }
            state = State.TRAILER;
        } else {
            state = State.DATA;
        }
    }

    private void endChunk() throws S3Error {
        if (verifier != null) {
            verifier.chunkEnded(signature);
        }
    }

    /** A whole line without its CRLF, or null when the buffer ended first (the part read is kept). */
    private String readLine(ByteBuffer in) throws S3Error {
        while (in.hasRemaining()) {
            char c = (char) (in.get() & 0xff);
            if (c == '\n') {
                int len = line.length();
                if (len == 0 || line.charAt(len - 1) != '\r') {
                    throw malformed("a chunk header line does not end with CRLF");
                }
                String l = line.substring(0, len - 1);
                line.setLength(0);
                return l;
            }
            if (line.length() >= MAX_LINE) {
                throw malformed("a chunk header line is longer than " + MAX_LINE + " bytes");
            }
            line.append(c);
        }
        return null;
    }

    private static S3Error malformed(String why) {
        return S3Error.badRequest("IncompleteBody", "the aws-chunked body is malformed: " + why);
    }

    static String ascii(ByteBuffer b) {
        return StandardCharsets.US_ASCII.decode(b.duplicate()).toString();
    }
}
