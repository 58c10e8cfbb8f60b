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
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retries retryable failures ({@link StoreException.Kind#retryable()}) with bounded exponential backoff and
 * full jitter; never retries not-found, access denied, precondition failures or other fatal errors.
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

    @FunctionalInterface
    interface Call<T> {
        T run() throws IOException;
    }

    <T> T withRetries(String what, Call<T> call) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.run();
            } catch (IOException e) {
                backoffOrThrow(what, attempt, e);
            }
        }
    }

    private void backoffOrThrow(String what, int attempt, IOException e) throws IOException {
        StoreException.Kind kind = StoreException.classify(e);
        if (!kind.retryable() || attempt >= policy.maxAttempts()) {
            if (kind.retryable()) {
                throw new StoreException(kind, e instanceof StoreException se ? se.httpStatus() : 0,
                        what + " failed after " + attempt + " attempts: " + e.getMessage(), e);
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
        // a read that breaks mid-way resumes where it stopped, pinned to the first ETag, within the same budget
        GetRequest pinned = request.withIfMatch(content.meta().etag());
        int[] failures = {0};
        return new ObjectContent(content.meta(), content.range(), new ResumingStream("stream of " + request.key(), content.range(),
                content.stream(), (rest, e) -> {
                    backoffOrThrow("read of " + request.key(), ++failures[0], e);
                    return withRetries("resume GET " + request.key(), () -> delegate.get(pinned.withRange(rest)).stream());
                }, n -> { }));
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        return withRetries("LIST s3://" + request.bucket() + "/" + request.prefix(), () -> delegate.list(request));
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        return withRetries("PUT " + key, () -> delegate.put(key, body));
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        withRetries("DELETE " + key, () -> {
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
        return withRetries("complete multipart upload of " + upload.key(), () -> multipart().completeMultipart(upload, parts));
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        withRetries("abort multipart upload of " + upload.key(), () -> {
            multipart().abortMultipart(upload);
            return null;
        });
    }
}
