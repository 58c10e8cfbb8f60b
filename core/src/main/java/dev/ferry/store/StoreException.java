package dev.ferry.store;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.http.HttpTimeoutException;

/**
 * A failure of an object store, classified where it enters ferry (the adapter that talked to the store), so
 * decorators above decide by {@link #kind()} alone whether to retry, back off or give up.
 */
public class StoreException extends IOException {
    private static final long serialVersionUID = 1L;

    /** What went wrong, as far as the caller needs to know. */
    public enum Kind {
        /** The object or bucket does not exist (404). */
        NOT_FOUND(false),
        /** Credentials missing, wrong or not allowed (401, 403). */
        ACCESS_DENIED(false),
        /** A conditional request did not match (412): the object changed. */
        PRECONDITION_FAILED(false),
        /** The store asked us to slow down (503, SlowDown, 429). Retryable, and a signal to the governor. */
        THROTTLED(true),
        /** A transient failure: 408, other 5xx, connection reset, timeout. */
        RETRYABLE(true),
        /** Anything else: bad request, invalid range, protocol errors. */
        FATAL(false);

        private final boolean retryable;

        Kind(boolean retryable) {
            this.retryable = retryable;
        }

        public boolean retryable() {
            return retryable;
        }
    }

    private final Kind kind;
    private final int httpStatus;
    private final String errorCode;

    public StoreException(Kind kind, String message) {
        this(kind, 0, message, null);
    }

    public StoreException(Kind kind, int httpStatus, String message, Throwable cause) {
        this(kind, httpStatus, null, message, cause);
    }

    /** A failure the store named with an S3 error code ({@code NoSuchUpload}, {@code BucketNotEmpty}, ...). */
    public StoreException(Kind kind, int httpStatus, String errorCode, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.httpStatus = httpStatus;
        this.errorCode = errorCode;
    }

    public Kind kind() {
        return kind;
    }

    /** The HTTP status the store answered with, or 0 where there was none. */
    public int httpStatus() {
        return httpStatus;
    }

    /** The S3 error code the store answered with ({@code NoSuchUpload}), or null where it gave none. */
    public String errorCode() {
        return errorCode;
    }

    /**
     * The first failure in {@code t}'s cause chain that carries an S3 error code, or null: decorators that
     * wrap a store's failure (retries, the cache's block fetch) keep the store's own failure as the cause.
     */
    public static StoreException withErrorCode(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof StoreException se && se.errorCode() != null) {
                return se;
            }
        }
        return null;
    }

    public boolean isRetryable() {
        return kind.retryable();
    }

    /**
     * The kind an HTTP status (with S3 error code, may be null) belongs to. Every 503 counts as throttling:
     * S3 answers 503 (SlowDown, or Service Unavailable) when a prefix is over its rate, and a HEAD's 503 has
     * no body to tell them apart.
     */
    public static Kind kindOf(int status, String errorCode) {
        if ("SlowDown".equals(errorCode) || status == 429 || status == 503) {
            return Kind.THROTTLED;
        }
        if ("NoSuchKey".equals(errorCode) || "NoSuchBucket".equals(errorCode) || status == 404) {
            return Kind.NOT_FOUND;
        }
        if (status == 401 || status == 403) {
            return Kind.ACCESS_DENIED;
        }
        if (status == 412) {
            return Kind.PRECONDITION_FAILED;
        }
        if (status == 408 || status >= 500 || "RequestTimeout".equals(errorCode) || "InternalError".equals(errorCode)) {
            return Kind.RETRYABLE;
        }
        return Kind.FATAL;
    }

    /**
     * Classifies any failure: a {@link StoreException} keeps its kind; resets, refused connections and
     * timeouts are retryable; other I/O errors are retryable too (a broken stream mid-read); everything else
     * is fatal.
     */
    public static Kind classify(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof StoreException se) {
                return se.kind();
            }
            if (c instanceof SocketTimeoutException || c instanceof HttpTimeoutException
                    || c instanceof ConnectException || c instanceof SocketException) {
                return Kind.RETRYABLE;
            }
        }
        if (t instanceof InterruptedIOException) {
            return Kind.FATAL;
        }
        if (t instanceof IOException) {
            return Kind.RETRYABLE;
        }
        return Kind.FATAL;
    }

    /**
     * Whether a write (a PUT, a multipart completion, a DELETE) that failed with {@code t} may still be applied by the
     * store later: true unless the store answered with a refusal (a 4xx, or 503/429 throttling, which S3 applies
     * nothing of) or the connection was never made. A request that went out and got no answer (a timeout, a reset,
     * an interrupt) or a 500, 502 or 504 (S3 says such a write may or may not have been applied; a gateway may have
     * passed it on) may land at any moment after, even after a newer write of its key.
     */
    public static boolean mayHaveApplied(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof StoreException se && se.httpStatus() != 0) {
                // a FATAL status is ferry's own judgment of an answer the store gave (another size stored): not unanswered
                int status = se.httpStatus();
                return se.kind() == Kind.RETRYABLE && (status == 500 || status == 502 || status == 504);
            }
            if (c instanceof ConnectException || c instanceof java.net.UnknownHostException) {
                return false;
            }
        }
        return true;
    }
}
