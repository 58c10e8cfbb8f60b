package dev.ferry.serve.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The continuation tokens of the daemon's listings. A token says where the next page resumes: the store's own
 * token for the store page the last page was in (null: the store's first page), the last name listed (names up
 * to it are skipped, so writes not yet uploaded, merged in by name, resume there too), and whether the store
 * groups the delimiter itself or the daemon does (a store that refuses the delimiter is listed without one).
 * Tokens of older daemons ({@code ferry1.}: resume after a key) and the store's own, passed through by them,
 * are still taken.
 */
public final class ContinuationTokens {
    private static final String V1 = "ferry1.";
    private static final String V2 = "ferry2.";

    /** Where a listing resumes; {@code after} null: from the start of that store page. */
    public record Resume(String storeToken, String after, boolean ferryGroups) {
        public static final Resume START = new Resume(null, null, false);
    }

    private ContinuationTokens() {
    }

    public static String of(Resume resume) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        return V2 + (resume.ferryGroups() ? "f" : "s") + "." + (resume.storeToken() == null ? "" : b64.encodeToString(utf8(resume.storeToken())))
                + "." + (resume.after() == null ? "" : b64.encodeToString(utf8(resume.after())));
    }

    /** Where {@code token} resumes. */
    public static Resume parse(String token) throws S3Error {
        try {
            Base64.Decoder b64 = Base64.getUrlDecoder();
            if (token.startsWith(V1)) {
                return new Resume(null, text(b64.decode(token.substring(V1.length()))), false);
            }
            if (!token.startsWith(V2)) {
                return new Resume(token, null, false); // a store's token, from an older daemon
            }
            String[] parts = token.substring(V2.length()).split("\\.", -1);
            if (parts.length != 3 || !(parts[0].equals("s") || parts[0].equals("f"))) {
                throw S3Error.invalidArgument("the continuation token is damaged");
            }
            return new Resume(parts[1].isEmpty() ? null : text(b64.decode(parts[1])), parts[2].isEmpty() ? null : text(b64.decode(parts[2])),
                    parts[0].equals("f"));
        } catch (IllegalArgumentException e) {
            throw S3Error.invalidArgument("the continuation token is damaged");
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
