package dev.ferry.serve.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Continuation tokens the daemon makes itself, when a page ends inside one of the store's pages (a smaller
 * max-keys): "resume after this key". Tokens the store gave pass through unchanged.
 */
public final class ContinuationTokens {
    private static final String PREFIX = "ferry1.";

    private ContinuationTokens() {
    }

    public static String after(String key) {
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(key.getBytes(StandardCharsets.UTF_8));
    }

    /** The key to resume after, or null when the token is not one of ours. */
    public static String parse(String token) throws S3Error {
        if (token == null || !token.startsWith(PREFIX)) {
            return null;
        }
        try {
            return new String(Base64.getUrlDecoder().decode(token.substring(PREFIX.length())), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw S3Error.invalidArgument("the continuation token is damaged");
        }
    }
}
