package dev.ferry.serve.protocol;

import dev.ferry.store.Checksum;
import dev.ferry.store.ObjectAttributes;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The headers an object keeps (see {@link ObjectAttributes}): taken from a PUT or CreateMultipartUpload, and
 * set on the answers of GET and HEAD.
 */
public final class ObjectHeaders {
    private ObjectHeaders() {
    }

    /** The attributes a write's headers give its object; {@code aws-chunked} is the transfer's, not the object's. */
    public static ObjectAttributes from(HttpHeaders headers) throws S3Error {
        Map<String, String> kept = new TreeMap<>();
        for (Map.Entry<String, String> h : headers) {
            String name = h.getKey().toLowerCase(Locale.ROOT);
            if (!ObjectAttributes.isObjectHeader(name)) { // a checksum is kept once verified, not as sent
                continue;
            }
            String value = h.getValue();
            if (name.equals("content-encoding")) {
                value = String.join(",", java.util.Arrays.stream(value.split(",")).map(String::trim)
                        .filter(v -> !v.isEmpty() && !v.equalsIgnoreCase("aws-chunked")).toList());
                if (value.isEmpty()) {
                    continue;
                }
            }
            kept.merge(name, value, (a, b) -> a + "," + b);
        }
        try {
            return new ObjectAttributes(kept);
        } catch (IllegalArgumentException e) {
            throw S3Error.badRequest("MetadataTooLarge", "the object's " + e.getMessage());
        }
    }

    /**
     * Sets an object's kept headers on an answer; an object without a type is served as bytes. Its checksum
     * is not among them: see {@link #applyChecksum}.
     */
    public static void apply(ObjectAttributes attributes, HttpHeaders h) {
        h.set("Content-Type", "application/octet-stream");
        attributes.headers().forEach((name, value) -> {
            if (ObjectAttributes.isObjectHeader(name)) {
                h.set(name, value);
            }
        });
    }

    /** Sets an object's checksum ({@code x-amz-checksum-<algorithm>}, {@code x-amz-checksum-type}), when it has one. */
    public static void applyChecksum(ObjectAttributes attributes, HttpHeaders h) {
        Checksum c = Checksum.of(attributes);
        if (c != null) {
            h.set(c.algorithm().header(), c.value());
            h.set(Checksum.TYPE_HEADER, c.type().name());
        }
    }

    /** Whether a GET or HEAD asked for the object's checksum ({@code x-amz-checksum-mode: ENABLED}). */
    public static boolean checksumWanted(HttpHeaders request) {
        String mode = request.get("x-amz-checksum-mode");
        return mode != null && mode.trim().equalsIgnoreCase("ENABLED");
    }
}
