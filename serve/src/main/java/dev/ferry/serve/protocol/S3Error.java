package dev.ferry.serve.protocol;

import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.StoreException;

/**
 * A request the daemon answers with an S3 error: the HTTP status, the S3 error code clients switch on
 * ({@code NoSuchKey}, {@code InvalidRange}, ...) and one sentence saying what is wrong.
 */
public final class S3Error extends Exception {
    private static final long serialVersionUID = 1L;

    private final int status;
   private final String code;

    public S3Error(int status, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    public static S3Error badRequest(String code, String message) {
        return new S3Error(400, code, message);
    }

    public static S3Error invalidArgument(String message) {
        return new S3Error(400, "InvalidArgument", message);
    }

    /**
     * An operation ferry does not implement: 501 NotImplemented, as S3 answers. The SDKs (Java v2, boto3,
     * awscli) retry 500, 502, 503 and 504, not 501, so such a request fails at once.
     */
    public static S3Error notImplemented(String what) {
        return new S3Error(501, "NotImplemented", what + " is not implemented by ferry");
    }

    /** The S3 error for a store failure. */
    public static S3Error from(java.io.IOException e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        StoreException named = StoreException.withErrorCode(e);
        if (named != null && named.httpStatus() >= 400 && named.httpStatus() < 600) {
            // the store said what is wrong in S3's own words: a client switches on that code (NoSuchUpload stays NoSuchUpload)
            return new S3Error(named.httpStatus(), named.errorCode(), message);
        }
        if (e instanceof ObjectNotFoundException) {
            return notFound(message);
        }
        if (e instanceof StoreException se) {
            return switch (se.kind()) {
                case NOT_FOUND -> notFound(message);
                case ACCESS_DENIED -> new S3Error(403, "AccessDenied", message);
                case PRECONDITION_FAILED -> new S3Error(412, "PreconditionFailed", message);
                case THROTTLED -> new S3Error(503, "SlowDown", message);
                case RETRYABLE -> new S3Error(503, "ServiceUnavailable", "the object store did not answer: " + message);
                case FATAL -> switch (se.httpStatus()) {
                    case 416 -> new S3Error(416, "InvalidRange", message);
                    case 400 -> new S3Error(400, message.contains("part") ? "InvalidPart" : "InvalidRequest", message);
                    case 409 -> new S3Error(409, "BucketAlreadyExists", message);
                    case 507 -> new S3Error(507, "InsufficientStorage", message);
                    default -> new S3Error(se.httpStatus() >= 400 && se.httpStatus() < 600 ? se.httpStatus() : 500,
                            "InternalError", message);
                };
            };
        }
        return new S3Error(500, "InternalError", message);
    }

    private static S3Error notFound(String message) {
        String lower = message.toLowerCase(java.util.Locale.ROOT);
        if (lower.contains("no such bucket") || lower.contains("nosuchbucket")) {
            return new S3Error(404, "NoSuchBucket", message);
        }
        if (lower.contains("upload")) {
            return new S3Error(404, "NoSuchUpload", message);
        }
        return new S3Error(404, "NoSuchKey", message);
    }
}
