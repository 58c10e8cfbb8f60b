package dev.ferry.store;

import java.nio.charset.StandardCharsets;

/**
 * The address of an object: a bucket and a key within it.
 *
 * <p>Bucket names follow S3's rules loosely enough for MinIO and GCS interop (3 to 63 characters of
 * lowercase letters, digits, dots and hyphens). Keys are 1 to 1,024 UTF-8 bytes without NUL; anything
 * further a tier needs (such as not escaping its root directory) is that tier's to enforce.
 */
public record ObjectKey(String bucket, String key) {
    public static final int MAX_KEY_BYTES = 1024;

    public ObjectKey {
        validateBucket(bucket);
        if (key == null) {
            throw new IllegalArgumentException("key is null");
        }
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key is empty");
        }
        if (key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
            throw new IllegalArgumentException("key is longer than " + MAX_KEY_BYTES + " bytes: " + key.substring(0, 64) + "...");
        }
        if (key.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("key contains a NUL character: " + key.replace('\0', '?'));
        }
    }

    public static ObjectKey of(String bucket, String key) {
        return new ObjectKey(bucket, key);
    }

    /** Throws {@link IllegalArgumentException} naming what is wrong with a bucket name. */
    public static void validateBucket(String bucket) {
        if (bucket == null) {
            throw new IllegalArgumentException("bucket is null");
        }
        if (bucket.length() < 3 || bucket.length() > 63) {
            throw new IllegalArgumentException("bucket name must be 3 to 63 characters: '" + bucket + "'");
        }
        for (int i = 0; i < bucket.length(); i++) {
            char c = bucket.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
            if (!ok) {
                throw new IllegalArgumentException(
                        "bucket name may hold only lowercase letters, digits, '.' and '-': '" + bucket + "'");
            }
        }
        if (!Character.isLetterOrDigit(bucket.charAt(0)) || !Character.isLetterOrDigit(bucket.charAt(bucket.length() - 1))) {
            throw new IllegalArgumentException("bucket name must start and end with a letter or digit: '" + bucket + "'");
        }
    }

    @Override
    public String toString() {
        return "s3://" + bucket + "/" + key;
    }
}
