package dev.ferry.store.chain;

import dev.ferry.store.CompletedPart;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.ResumingStream;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retries retryable failures ({@link StoreException.Kind#retryable()}) with bounded exponential backoff and
 * full jitter; never retries not-found, access denied, precondition failures or other fatal errors, nor a write
 * (PUT, multipart completion, DELETE) whose attempt may still land ({@link StoreException#mayHaveApplied}).
 *
 * <p>A read that breaks mid-stream resumes where it stopped with a ranged GET pinned to the ETag it
 * started with (If-Match), so a retried read never splices two versions of an object. The same attempt
 * budget covers the open and each resume.
 *
 * <p>Thread-safe; the random generator must be too (the default is).
 */
public final class RetryingStore extends ForwardingObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(RetryingStore.class);

    private final RetryPolicy policy;
    private final Clock clock;
    private final RandomGenerator random;
    private final LongAdder retries = new LongAdder();
    private volatile Consumer<ObjectKey> unansweredWrites = key -> { };

    public RetryingStore(ObjectStore delegate, RetryPolicy policy) {
        this(delegate, policy, Clock.system(), java.util.concurrent.ThreadLocalRandom.current());
    }

    public RetryingStore(ObjectStore delegate, RetryPolicy policy, Clock clock, RandomGenerator random) {
        super(delegate);
        this.policy = Objects.requireNonNull(policy, "policy is null");
        this.clock = Objects.requireNonNull(clock, "clock is null");
        this.random = random == null ? RandomGenerator.getDefault() : random;
    }

    /** Retries made so far (attempts beyond the first). */
    public long retries() {
        return retries.sum();
    }

    /**
     * Tells {@code listener} of every attempt to write or delete a key (a PUT, a multipart completion, a DELETE) that
     * ended in a way that may still be applied by the store later ({@link StoreException#mayHaveApplied}), retried
     * or not: write-back waits such an attempt out before it calls its key's newest write durable. The listener runs
     * on the attempt's thread and must not block.
     */
    public void onUnansweredWrite(Consumer<ObjectKey> listener) {
        this.unansweredWrites = Objects.requireNonNull(listener, "listener is null");
    }

    @FunctionalInterface
    interface Call<T> {
        T run() throws IOException;
    }

    <T> T withRetries(String what, Call<T> call) throws IOException {
        return withRetries(what, null, call);
    }

    /**
     * Runs {@code call} with retries. A write of {@code written} whose attempt fails in a way that may still land is
     * reported and not retried here: a retry that succeeds would be answered while the first attempt can still land
     * after it, and after any write its caller makes next. The caller decides (write-back waits such an attempt out
     * before it calls its key durable; a client of the daemon gets the error, as S3 would give it).
     */
    private <T> T withRetries(String what, ObjectKey written, Call<T> call) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.run();
            } catch (IOException e) {
                if (written != null && StoreException.mayHaveApplied(e)) {
                    unansweredWrites.accept(written);
                    throw e;
                }
                backoffOrThrow(what, attempt, e);
            }
        }
    }

    private void backoffOrThrow(String what, int attempt, IOException e) throws IOException {
        StoreException.Kind kind = StoreException.classify(e);
        if (!kind.retryable() || attempt >= policy.maxAttempts()) {
            if (kind.retryable()) {
                throw new Exhausted(kind, e instanceof StoreException se ? se.httpStatus() : 0, StoreException.withErrorCode(e),
                        what + " failed after " + attempt + " attempts: " + e.getMessage(), e, attempt);
            }
            throw e;
        }
        long cap = policy.capNanos(attempt);
        long wait = cap == 0 ? 0 : random.nextLong(cap + 1);
        retries.increment();
        LOG.debug("{} failed ({}), retry {} in {} ms", what, e.getMessage(), attempt, wait / 1_000_000);
        try {
            clock.sleepNanos(wait);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            InterruptedIOException iie = new InterruptedIOException("interrupted while retrying " + what);
            iie.addSuppressed(e);
            throw iie;
        }
    }

    /** A retryable failure that lasted through every attempt the policy allows: {@link #attempts} of them. */
    public static final class Exhausted extends StoreException {
        private static final long serialVersionUID = 1L;
        private final int attempts;

        Exhausted(Kind kind, int status, StoreException coded, String message, Throwable cause, int attempts) {
            super(kind, status, coded == null ? null : coded.errorCode(), message, cause);
            this.attempts = attempts;
        }

        /** The attempts made, each failed. */
        public int attempts() {
            return attempts;
        }
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        return withRetries("HEAD " + key, () -> delegate.head(key));
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        ObjectContent content = withRetries("GET " + request.key(), () -> delegate.get(request));
        if (content.length() == 0) {
            return content;
        }
        // a read that breaks mid-way resumes where it stopped, pinned to the first ETag, within the same budget; the
        // time it spends stalled (last byte to failure), summed over its resumes, within the stall budget
        GetRequest pinned = request.withIfMatch(content.meta().etag());
        int[] failures = {0};
        long[] lastByte = {clock.nanoTime()};
        long[] stalled = {0};
        return new ObjectContent(content.meta(), content.range(), new ResumingStream("stream of " + request.key(), content.range(),
                content.stream(), (rest, e) -> {
                    stalled[0] += clock.nanoTime() - lastByte[0];
                    if (stalled[0] >= policy.readStallBudget().toNanos()) {
                        throw new StoreException(StoreException.Kind.RETRYABLE, 0, "read of " + request.key() + " stalled: no bytes for "
                                + stalled[0] / 1_000_000 + " ms in all (read stall budget " + policy.readStallBudget().toMillis() + " ms); "
                                + e.getMessage(), e);
                    }
                    backoffOrThrow("read of " + request.key(), ++failures[0], e);
                    InputStream resumed = withRetries("resume GET " + request.key(), () -> delegate.get(pinned.withRange(rest)).stream());
                    lastByte[0] = clock.nanoTime();
                    return resumed;
                }, n -> lastByte[0] = clock.nanoTime()));
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        return withRetries("LIST s3://" + request.bucket() + "/" + request.prefix(), () -> delegate.list(request));
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        return withRetries("PUT " + key, key, () -> delegate.put(key, body));
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        withRetries("DELETE " + key, key, () -> {
            delegate.delete(key);
            return null;
        });
    }

    @Override
    public MultipartUpload startMultipart(ObjectKey key, ObjectAttributes attributes) throws IOException {
        return withRetries("create multipart upload of " + key, () -> multipart().startMultipart(key, attributes));
    }

    @Override
    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        return withRetries("upload part " + partNumber + " of " + upload.key(), () -> multipart().uploadPart(upload, partNumber, body));
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        return withRetries("complete multipart upload of " + upload.key(), upload.key(), () -> multipart().completeMultipart(upload, parts));
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        withRetries("abort multipart upload of " + upload.key(), () -> {
            multipart().abortMultipart(upload);
            return null;
        });
    }
}
