package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.S3Error;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import io.netty.handler.codec.http.HttpHeaders;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;

/**
 * Conditional requests. Reads ({@code If-Match}, {@code If-None-Match}, {@code If-Modified-Since},
 * {@code If-Unmodified-Since}) follow RFC 9110 section 13.2.2, as S3 does: an ETag condition present
 * overrides its date counterpart, a date that does not parse is ignored, dates compare to the second.
 * Writes (PUT, CompleteMultipartUpload) take {@code If-None-Match: *} (the key must not exist) and
 * {@code If-Match} (the current ETag must match; 404 when there is no object, as S3 answers); the caller
 * runs the check and the write under the key's {@link KeyLocks lock}.
 */
final class Preconditions {
    private Preconditions() {
    }

    /**
     * Whether a read's conditions say "not modified" (304); throws 412 PreconditionFailed when they fail.
     */
    static boolean notModified(HttpHeaders h, ObjectMeta meta, ObjectKey key) throws S3Error {
        String ifMatch = h.get("If-Match");
        if (ifMatch != null) {
            if (!etagMatches(ifMatch, meta.etag())) {
                throw new S3Error(412, "PreconditionFailed", "If-Match " + ifMatch + " does not match " + key + "'s ETag "
                        + S3Service.quote(meta.etag()));
            }
        } else {
            Instant unmodifiedSince = date(h.get("If-Unmodified-Since"));
            if (unmodifiedSince != null && seconds(meta.lastModified()).isAfter(unmodifiedSince)) {
                throw new S3Error(412, "PreconditionFailed", key + " was modified after If-Unmodified-Since "
                        + h.get("If-Unmodified-Since"));
            }
        }
        String ifNoneMatch = h.get("If-None-Match");
        if (ifNoneMatch != null) {
            return etagMatches(ifNoneMatch, meta.etag());
        }
        Instant modifiedSince = date(h.get("If-Modified-Since"));
        return modifiedSince != null && !seconds(meta.lastModified()).isAfter(modifiedSince);
    }

    /** Whether a write carries conditions: only then is the current object looked up. */
    static boolean conditionalWrite(HttpHeaders h) {
        return h.contains("If-Match") || h.contains("If-None-Match");
    }

    /**
     * Checks a write's conditions against the object as it is now ({@code current}, null when there is none).
     */
    static void checkWrite(HttpHeaders h, ObjectKey key, ObjectMeta current) throws S3Error {
        String ifNoneMatch = h.get("If-None-Match");
        if (ifNoneMatch != null) {
            if (!ifNoneMatch.trim().equals("*")) {
                throw S3Error.notImplemented("If-None-Match with an ETag on a write (only '*' is supported)");
            }
            if (current != null) {
                throw new S3Error(412, "PreconditionFailed", key + " exists, and the write said If-None-Match: *");
            }
        }
        String ifMatch = h.get("If-Match");
        if (ifMatch != null) {
            if (current == null) {
                throw new S3Error(404, "NoSuchKey", key + " does not exist, and the write said If-Match " + ifMatch);
            }
            if (!etagMatches(ifMatch, current.etag())) {
                throw new S3Error(412, "PreconditionFailed", "If-Match " + ifMatch + " does not match " + key + "'s ETag "
                        + S3Service.quote(current.etag()));
            }
        }
    }

    static boolean etagMatches(String header, String etag) {
        for (String candidate : header.split(",")) {
            String c = candidate.trim();
            if (c.equals("*") || ObjectMeta.stripQuotes(c.startsWith("W/") ? c.substring(2) : c).equals(etag)) {
                return true;
            }
        }
        return false;
    }

    private static Instant date(String header) {
        if (header == null) {
            return null;
        }
        try {
            return ZonedDateTime.parse(header.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            return null; // RFC 9110: a condition whose date is not valid is ignored
        }
    }

    private static Instant seconds(Instant t) {
        return t.truncatedTo(ChronoUnit.SECONDS); // HTTP dates have whole seconds
    }
}
