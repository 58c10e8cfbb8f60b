package dev.ferry.serve.protocol;

import dev.ferry.store.ObjectKey;
import java.nio.charset.StandardCharsets;

/**
 * Checks bucket names and keys before any store sees them: nothing a client sends may name a path outside
 * the store or cache root, whatever the store behind.
 */
public final class Keys {
    private Keys() {
    }

    public static String bucket(String bucket) throws S3Error {
        try {
            ObjectKey.validateBucket(bucket);
        } catch (IllegalArgumentException e) {
            throw S3Error.badRequest("InvalidBucketName", e.getMessage());
        }
        return bucket;
    }

    /** The key, unchanged, when it is acceptable: at most 1,024 bytes, no control characters, no . or .. segments. */
    public static String check(String key) throws S3Error {
        if (key.getBytes(StandardCharsets.UTF_8).length > ObjectKey.MAX_KEY_BYTES) {
            throw S3Error.badRequest("KeyTooLongError", "the key is longer than " + ObjectKey.MAX_KEY_BYTES + " bytes");
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                throw S3Error.invalidArgument("the key holds a control character (code " + (int) c + ")");
            }
        }
        for (String segment : key.split("/", -1)) {
            if (segment.equals(".") || segment.equals("..")) {
                throw S3Error.invalidArgument("the key has a '" + segment + "' path segment: " + Uris.abbreviate(key));
            }
        }
        return key;
    }
}
