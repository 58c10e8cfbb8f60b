package dev.ferry.serve.protocol;

import io.netty.handler.codec.http.HttpHeaders;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * AWS Signature Version 4, checked on the server: the Authorization header (or a presigned URL's query),
 * then the payload, as the request's {@code x-amz-content-sha256} says it was signed: a hex SHA-256 of the
 * body, signed chunks ({@code STREAMING-AWS4-HMAC-SHA256-PAYLOAD}, each chunk's signature chained to the
 * previous one), or {@code UNSIGNED-PAYLOAD}. The region in the credential scope is the client's: ferry is
 * not regional.
 *
 * <p>Time, as S3 checks it: a header-signed request dated more than 15 minutes from the daemon's clock is
 * {@code 403 RequestTimeTooSkewed}; a presigned URL's {@code X-Amz-Expires} must be 0 to 604800 seconds (a
 * week) or it is {@code 400 AuthorizationQueryParametersError}; one dated more than 15 minutes ahead is
 * {@code 403 AccessDenied} (Request is not yet valid), and one past its date plus its lifetime is
 * {@code 403 AccessDenied} (Request has expired). Thread-safe.
 */
public final class SigV4 {
    static final String ALGORITHM = "AWS4-HMAC-SHA256";
    static final String EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    private static final Duration MAX_SKEW = Duration.ofMinutes(15);
    /** The longest a presigned URL may be valid: S3 refuses an {@code X-Amz-Expires} over a week. */
    static final long MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;
    private static final HexFormat HEX = HexFormat.of();

    private final String accessKey;
    private final byte[] secret;

    public SigV4(String accessKey, String secretKey) {
        this.accessKey = accessKey;
        this.secret = ("AWS4" + secretKey).getBytes(StandardCharsets.UTF_8);
    }

    /** What a verified request's body must still satisfy. */
    public record Signed(String payloadHash, byte[] signingKey, String amzDate, String scope, String seedSignature) {
        boolean signedChunks() {
            return payloadHash.startsWith("STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
        }

        /** A hex SHA-256 the body must have, or null when the payload is unsigned or chunk-signed. */
        String bodySha256() {
            return payloadHash.length() == 64 && payloadHash.chars().allMatch(c -> Character.digit(c, 16) >= 0) ? payloadHash : null;
        }
    }

    /** Verifies the request's signature; throws 403 (or 400 for a malformed header) when it does not hold. */
    public Signed verify(String method, String rawPath, String rawQuery, HttpHeaders headers, Instant now) throws S3Error {
        Map<String, List<String>> query = Uris.query(rawQuery);
        String auth = headers.get("Authorization");
        boolean presigned = query.containsKey("X-Amz-Signature");
        if (auth == null && !presigned) {
            throw new S3Error(403, "AccessDenied", "the request is not signed; this daemon requires AWS Signature V4");
        }
        if (auth != null && (presigned || query.containsKey("X-Amz-Algorithm"))) {
            throw S3Error.badRequest("InvalidArgument", "Only one auth mechanism allowed: the request has both an Authorization header"
                    + " and a presigned URL's X-Amz-Signature");
        }
        String credential;
        String signedHeaders;
        String signature;
        String amzDate;
        String payloadHash;
        if (presigned) {
            credential = one(query, "X-Amz-Credential");
            signedHeaders = one(query, "X-Amz-SignedHeaders");
            signature = one(query, "X-Amz-Signature");
            amzDate = one(query, "X-Amz-Date");
            if (!ALGORITHM.equals(one(query, "X-Amz-Algorithm"))) {
                throw S3Error.badRequest("AuthorizationQueryParametersError", "X-Amz-Algorithm must be " + ALGORITHM);
            }
            Instant signedAt = parseDate(amzDate);
            long expires;
            try {
                expires = Long.parseLong(one(query, "X-Amz-Expires"));
            } catch (NumberFormatException e) {
                throw S3Error.badRequest("AuthorizationQueryParametersError", "X-Amz-Expires is not a number of seconds");
            }
            if (expires < 0) {
                throw S3Error.badRequest("AuthorizationQueryParametersError", "X-Amz-Expires must be non-negative, not " + expires);
            }
            if (expires > MAX_PRESIGNED_SECONDS) {
                throw S3Error.badRequest("AuthorizationQueryParametersError", "X-Amz-Expires must be at most a week ("
                        + MAX_PRESIGNED_SECONDS + " seconds), not " + expires);
            }
            if (signedAt.isAfter(now.plus(MAX_SKEW))) {
                throw new S3Error(403, "AccessDenied", "Request is not yet valid: the presigned URL is dated " + signedAt
                        + ", more than 15 minutes ahead of the daemon's clock (" + now + ")");
            }
            if (now.isAfter(signedAt.plusSeconds(expires))) {
                throw new S3Error(403, "AccessDenied", "Request has expired: the presigned URL expired at " + signedAt.plusSeconds(expires));
            }
            payloadHash = "UNSIGNED-PAYLOAD";
        } else {
            if (!auth.startsWith(ALGORITHM + " ")) {
                throw S3Error.badRequest("AuthorizationHeaderMalformed", "only " + ALGORITHM + " signatures are accepted");
            }
            credential = null;
            signedHeaders = null;
            signature = null;
            for (String part : auth.substring(ALGORITHM.length() + 1).split(",")) {
                String p = part.trim();
                if (p.startsWith("Credential=")) {
                    credential = p.substring("Credential=".length());
                } else if (p.startsWith("SignedHeaders=")) {
                    signedHeaders = p.substring("SignedHeaders=".length());
                } else if (p.startsWith("Signature=")) {
                    signature = p.substring("Signature=".length());
                }
            }
            if (credential == null || signedHeaders == null || signature == null) {
                throw S3Error.badRequest("AuthorizationHeaderMalformed",
                        "the Authorization header needs Credential, SignedHeaders and Signature");
            }
            amzDate = headers.get("x-amz-date");
            if (amzDate == null) {
                throw new S3Error(403, "AccessDenied", "a signed request needs an x-amz-date header");
            }
            Instant signedAt = parseDate(amzDate);
            if (Duration.between(signedAt, now).abs().compareTo(MAX_SKEW) > 0) {
                throw new S3Error(403, "RequestTimeTooSkewed", "the request was signed at " + signedAt
                        + ", more than 15 minutes from the daemon's clock (" + now + ")");
            }
            payloadHash = headers.get("x-amz-content-sha256");
            if (payloadHash == null) {
                throw S3Error.badRequest("InvalidRequest", "a signed request needs an x-amz-content-sha256 header");
            }
        }
        String[] scopeParts = credential.split("/");
        if (scopeParts.length != 5 || !scopeParts[3].equals("s3") || !scopeParts[4].equals("aws4_request")) {
            throw S3Error.badRequest("AuthorizationHeaderMalformed",
                    "the credential must be <key>/<date>/<region>/s3/aws4_request, not " + credential);
        }
        if (!scopeParts[0].equals(accessKey)) {
            throw new S3Error(403, "InvalidAccessKeyId", "the access key " + scopeParts[0] + " is not known to this daemon");
        }
        if (!amzDate.startsWith(scopeParts[1])) {
            throw new S3Error(403, "SignatureDoesNotMatch", "the credential's date does not match the request's date");
        }
        requireSigned(headers, signedHeaders, presigned);
        String scope = scopeParts[1] + "/" + scopeParts[2] + "/s3/aws4_request";
        String canonical = method + "\n" + canonicalUri(rawPath) + "\n" + canonicalQuery(query) + "\n"
                + canonicalHeaders(headers, signedHeaders) + "\n" + signedHeaders + "\n" + payloadHash;
        String stringToSign = ALGORITHM + "\n" + amzDate + "\n" + scope + "\n" + sha256Hex(canonical.getBytes(StandardCharsets.UTF_8));
        byte[] key = signingKey(scopeParts[1], scopeParts[2]);
        String expected = HEX.formatHex(hmac(key, stringToSign));
        if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), signature.getBytes(StandardCharsets.US_ASCII))) {
            throw new S3Error(403, "SignatureDoesNotMatch",
                    "the request signature we calculated does not match the signature you provided; check your secret key");
        }
        return new Signed(payloadHash, key, amzDate, scope, signature);
    }

    /** Checks signed chunks, each signature chained to the one before (the first to the request's). */
    static AwsChunked.ChunkVerifier chunkVerifier(Signed signed) {
        return new AwsChunked.ChunkVerifier() {
            private String previous = signed.seedSignature();
            private MessageDigest digest;

            @Override
            public void chunkStarted() {
                digest = sha256();
            }

            @Override
            public void chunkData(ByteBuffer data) {
                digest.update(data);
            }

            @Override
            public void chunkEnded(String signature) throws S3Error {
                if (signature == null) {
                    throw new S3Error(403, "SignatureDoesNotMatch", "a chunk of a signed streaming upload carries no signature");
                }
                String toSign = "AWS4-HMAC-SHA256-PAYLOAD\n" + signed.amzDate() + "\n" + signed.scope() + "\n" + previous + "\n"
                        + EMPTY_SHA256 + "\n" + HEX.formatHex(digest.digest());
                String expected = HEX.formatHex(hmac(signed.signingKey(), toSign));
                if (!expected.equals(signature)) {
                    throw new S3Error(403, "SignatureDoesNotMatch", "a chunk's signature does not match its bytes");
                }
                previous = signature;
            }

            @Override
            public void trailer(Map<String, String> trailers, String signature) throws S3Error {
                if (!signed.payloadHash().endsWith("-TRAILER")) {
                    return;
                }
                if (signature == null) {
                    throw new S3Error(403, "SignatureDoesNotMatch", "the trailer of a signed streaming upload carries no signature");
                }
                StringBuilder canonical = new StringBuilder();
                trailers.forEach((k, v) -> canonical.append(k).append(':').append(v).append('\n'));
                String toSign = "AWS4-HMAC-SHA256-TRAILER\n" + signed.amzDate() + "\n" + signed.scope() + "\n" + previous + "\n"
                        + sha256Hex(canonical.toString().getBytes(StandardCharsets.UTF_8));
                if (!HEX.formatHex(hmac(signed.signingKey(), toSign)).equals(signature)) {
                    throw new S3Error(403, "SignatureDoesNotMatch", "the trailer's signature does not match");
                }
            }
        };
    }

    /**
     * A presigned request's query, for ferry's own clients ({@code ferry flush}): {@code query} (raw, already
     * URL-encoded, or empty) with the {@code X-Amz-*} parameters that {@link #verify} checks, signing the
     * {@code host} header only and an unsigned payload (what a presigned URL signs), valid {@code expires} from
     * {@code now}.
     */
    public String presignedQuery(String method, String rawPath, String rawQuery, String host, String region, Instant now, Duration expires)
            throws S3Error {
        String amzDate = formatDate(now);
        String scope = amzDate.substring(0, 8) + "/" + region + "/s3/aws4_request";
        Map<String, List<String>> query = new java.util.LinkedHashMap<>(Uris.query(rawQuery == null ? "" : rawQuery));
        query.put("X-Amz-Algorithm", List.of(ALGORITHM));
        query.put("X-Amz-Credential", List.of(accessKey + "/" + scope));
        query.put("X-Amz-Date", List.of(amzDate));
        query.put("X-Amz-Expires", List.of(Long.toString(expires.toSeconds())));
        query.put("X-Amz-SignedHeaders", List.of("host"));
        String canonicalQuery = canonicalQuery(query);
        String canonical = method + "\n" + canonicalUri(rawPath) + "\n" + canonicalQuery + "\nhost:" + host.trim() + "\n\nhost\nUNSIGNED-PAYLOAD";
        String stringToSign = ALGORITHM + "\n" + amzDate + "\n" + scope + "\n" + sha256Hex(canonical.getBytes(StandardCharsets.UTF_8));
        String signature = HEX.formatHex(hmac(signingKey(amzDate.substring(0, 8), region), stringToSign));
        return canonicalQuery + "&X-Amz-Signature=" + signature;
    }

    private static String one(Map<String, List<String>> query, String name) throws S3Error {
        List<String> v = query.get(name);
        if (v == null || v.isEmpty()) {
            throw S3Error.badRequest("AuthorizationQueryParametersError", "a presigned URL needs " + name);
        }
        return v.get(0);
    }

    private static Instant parseDate(String amzDate) throws S3Error {
        try {
            return Instant.from(AMZ_DATE.parse(amzDate));
        } catch (DateTimeParseException e) {
            throw new S3Error(403, "AccessDenied", "x-amz-date must look like 20240101T000000Z, not " + amzDate);
        }
    }

    static String canonicalUri(String rawPath) throws S3Error {
        return Uris.encode(Uris.decode(rawPath), false);
    }

    static String canonicalQuery(Map<String, List<String>> query) {
        List<String> pairs = new ArrayList<>();
        query.forEach((name, values) -> {
            if (!name.equals("X-Amz-Signature")) {
                for (String v : values) {
                    pairs.add(Uris.encode(name, true) + "=" + Uris.encode(v, true));
                }
            }
        });
        pairs.sort(null);
        return String.join("&", pairs);
    }

    /**
     * S3's rule for what a signature must cover: Host, every {@code x-amz-*} header the request carries and, when the
     * Authorization header signs it, Content-Type and Content-MD5 where present. A header outside the signature
     * could be added by anyone who saw the request (an {@code x-amz-copy-source} turns a PUT into a copy), so its
     * request is refused as S3 refuses it: 403 AccessDenied naming the headers.
     */
    private static void requireSigned(HttpHeaders headers, String signedHeaders, boolean presigned) throws S3Error {
        Set<String> signed = new HashSet<>(List.of(signedHeaders.toLowerCase(Locale.ROOT).split(";")));
        if (!signed.contains("host")) {
            throw new S3Error(403, "AccessDenied", "the signature must cover the Host header; SignedHeaders is " + signedHeaders);
        }
        TreeSet<String> unsigned = new TreeSet<>();
        for (String name : headers.names()) {
            String lower = name.toLowerCase(Locale.ROOT);
            boolean mustSign = lower.startsWith("x-amz-") || !presigned && (lower.equals("content-type") || lower.equals("content-md5"));
            if (mustSign && !signed.contains(lower)) {
                unsigned.add(lower);
            }
        }
        if (!unsigned.isEmpty()) {
            throw new S3Error(403, "AccessDenied", "There were headers present in the request which were not signed: "
                    + String.join(", ", unsigned));
        }
    }

    private static String canonicalHeaders(HttpHeaders headers, String signedHeaders) throws S3Error {
        StringBuilder out = new StringBuilder();
        for (String name : signedHeaders.split(";")) {
            List<String> values = headers.getAll(name);
            if (values.isEmpty()) {
                throw new S3Error(403, "SignatureDoesNotMatch", "the signed header " + name + " is missing from the request");
            }
            List<String> trimmed = new ArrayList<>();
            for (String v : values) {
                trimmed.add(v.trim().replaceAll(" +", " "));
            }
            out.append(name.toLowerCase(Locale.ROOT)).append(':').append(String.join(",", trimmed)).append('\n');
        }
        return out.toString();
    }

    private byte[] signingKey(String date, String region) {
        byte[] k = hmac(secret, date);
        k = hmac(k, region);
        k = hmac(k, "s3");
        return hmac(k, "aws4_request");
    }

    static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }

    static String sha256Hex(byte[] data) {
        return HEX.formatHex(sha256().digest(data));
    }

    static String formatDate(Instant t) {
        return AMZ_DATE.format(t);
    }
}
