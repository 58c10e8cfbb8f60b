package dev.ferry.s3client;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.StoreException;
import java.io.UncheckedIOException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * How a failure of the AWS SDK becomes ferry's: an S3 error answered by the store is classified by its status and
 * code ({@link StoreException#kindOf}), no answer is retryable (unless the caller was interrupted), missing
 * credentials are one sentence instead of the SDK's paragraph. Stateless.
 */
final class SdkCalls {
    private SdkCalls() {
    }

    @FunctionalInterface
    interface SdkCall<T> {
        T run();
    }

    /** Runs an SDK call and classifies what it throws. */
    static <T> T call(String what, ObjectKey key, SdkCall<T> call) throws StoreException {
        try {
            return call.run();
        } catch (S3Exception e) {
            throw classify(what, key, e);
        } catch (SdkClientException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("Unable to load credentials")) {
                // the SDK's chain lists every provider it tried in a paragraph: said in one sentence instead
                throw new StoreException(StoreException.Kind.FATAL, 0, what + ": no credentials for the object store were found (set "
                        + "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)", e);
            }
            // No answer from the store: connection refused or reset, timeouts. Transient unless an interrupt.
            StoreException.Kind kind = Thread.currentThread().isInterrupted()
                    ? StoreException.Kind.FATAL : StoreException.Kind.RETRYABLE;
            throw new StoreException(kind, 0, what + ": " + e.getMessage(), e);
        } catch (SdkException e) {
            throw new StoreException(StoreException.Kind.FATAL, 0, what + ": " + e.getMessage(), e);
        } catch (UncheckedIOException e) {
            throw new StoreException(StoreException.classify(e.getCause()), 0, what + ": " + e.getCause().getMessage(), e.getCause());
        }
    }

    static StoreException classify(String what, ObjectKey key, S3Exception e) {
        int status = e.statusCode();
        String code = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
        String message = e.awsErrorDetails() == null ? e.getMessage() : e.awsErrorDetails().errorMessage();
        StoreException.Kind kind = StoreException.kindOf(status, code);
        String text = what + ": " + status + (code == null ? "" : " " + code) + (message == null ? "" : ": " + message);
        if (kind == StoreException.Kind.NOT_FOUND) {
            // said once: "LIST s3://b/p: no such bucket (404 NoSuchBucket)", not S3's sentence after ferry's
            return new ObjectNotFoundException("NoSuchBucket".equals(code) ? what + ": no such bucket (" + status + " NoSuchBucket)"
                    : key == null || (code != null && !"NoSuchKey".equals(code)) ? text : "no such object: " + key, code, e);
        }
        return new StoreException(kind, status, code, text, e);
    }
}
