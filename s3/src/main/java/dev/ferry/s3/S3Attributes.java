package dev.ferry.s3;

import dev.ferry.store.ObjectAttributes;
import java.util.Map;
import java.util.TreeMap;
import software.amazon.awssdk.awscore.AwsRequest;

/** Object attributes to and from the SDK's fields. */
final class S3Attributes {
    private S3Attributes() {
    }

    static ObjectAttributes of(String contentType, String contentEncoding, String cacheControl, String contentDisposition,
            String contentLanguage, String expires, Map<String, String> metadata) {
        TreeMap<String, String> h = new TreeMap<>();
        put(h, "content-type", contentType);
        put(h, "content-encoding", contentEncoding);
        put(h, "cache-control", cacheControl);
        put(h, "content-disposition", contentDisposition);
        put(h, "content-language", contentLanguage);
        put(h, "expires", expires);
        if (metadata != null) {
            metadata.forEach((k, v) -> put(h, ObjectAttributes.USER_PREFIX + k, v));
        }
        try {
            return new ObjectAttributes(h);
        } catch (IllegalArgumentException e) {
            return ObjectAttributes.NONE; // a store that keeps more than S3 allows: serve the bytes without them
        }
    }

    private static void put(Map<String, String> h, String name, String value) {
        if (value != null && !value.isEmpty()) {
            h.put(name, value);
        }
    }

    /** Expires goes as the client sent it (the SDK's field takes only a parseable date). */
    static void expires(AwsRequest.Builder b, ObjectAttributes a) {
        String expires = a.get("expires");
        if (expires != null) {
            b.overrideConfiguration(o -> o.putHeader("Expires", expires));
        }
    }
}
