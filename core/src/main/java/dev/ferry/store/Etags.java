package dev.ferry.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

/**
 * The ETags S3 gives objects it was sent whole or in parts, so that an ETag ferry answers is the one the
 * object store reports once the object is there: the MD5 of the bytes in hex for a single PUT, and for a
 * multipart upload the MD5 of the concatenated binary MD5s of its parts, then {@code -N} (N parts).
 */
public final class Etags {
    private Etags() {
    }

    public static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 is not available", e);
        }
    }

    /** The ETag of a single PUT of {@code md5}'s bytes. */
    public static String ofDigest(byte[] md5) {
        return HexFormat.of().formatHex(md5);
    }

    /** The hex MD5 of a file's bytes. */
    public static String ofFile(Path file) throws IOException {
        MessageDigest md5 = md5();
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md5.update(buf, 0, n);
            }
        }
        return ofDigest(md5.digest());
    }

    /** The ETag of a multipart upload whose parts have these ETags (hex MD5s), in order. */
    public static String multipart(List<String> partEtags) {
        MessageDigest md5 = md5();
        for (String e : partEtags) {
            String hex = ObjectMeta.stripQuotes(e);
            if (hex.length() != 32) {
                throw new IllegalArgumentException("a part ETag is not an MD5: " + e);
            }
            md5.update(HexFormat.of().parseHex(hex));
        }
        return ofDigest(md5.digest()) + "-" + partEtags.size();
    }

    /** Whether an ETag has the form of a content MD5 (32 hex digits), which any store computing it will agree on. */
    public static boolean isMd5(String etag) {
        if (etag == null || etag.length() != 32) {
            return false;
        }
        for (int i = 0; i < 32; i++) {
            if (Character.digit(etag.charAt(i), 16) < 0) {
                return false;
            }
        }
        return true;
    }
}
