package dev.ferry.decoded;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * What a decoded sample is the decode of: the bytes {@code offset} to {@code offset + length} of object
 * {@code bucket/key} at version {@code etag}, through the decode named {@code version} (the function's qualified name
 * and the version string its user gives). A changed object, sample or decode is another key.
 */
public record DecodedKey(String bucket, String key, String etag, long offset, long length, String version) {
    public DecodedKey {
        for (String[] field : new String[][] {{"bucket", bucket}, {"key", key}, {"etag", etag}, {"version", version}}) {
            if (field[1] == null || field[1].isEmpty()) {
                throw new IllegalArgumentException("a decoded sample's " + field[0] + " is missing");
            }
            if (field[1].indexOf('\n') >= 0) {
                throw new IllegalArgumentException("a decoded sample's " + field[0] + " holds a line break");
            }
        }
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("a decoded sample's offset and length must be at least 0, not " + offset + " and " + length);
        }
    }

    /** The key as one line per field, stored in the entry's file and compared on every read. */
    public String canonical() {
        return bucket + "\n" + key + "\n" + etag + "\n" + offset + "\n" + length + "\n" + version;
    }

    /** The entry's file name: the first 160 bits of the canonical form's SHA-256, in hex. */
    public String id() {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(canonical().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 20);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this Java has no SHA-256", e);
        }
    }
}
