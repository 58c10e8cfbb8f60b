package dev.ferry.store;

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
        return new ObjectContent(content.meta(), content.range(), new ResumingStream(request, content));
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
    public MultipartUpload startMultipart(ObjectKey key) throws IOException {
        return withRetries("create multipart upload of " + key, () -> delegate.startMultipart(key));
    }

    @Override
    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        return withRetries("upload part " + partNumber + " of " + upload.key(), () -> delegate.uploadPart(upload, partNumber, body));
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        return withRetries("complete multipart upload of " + upload.key(), () -> delegate.completeMultipart(upload, parts));
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        withRetries("abort multipart upload of " + upload.key(), () -> {
            delegate.abortMultipart(upload);
            return null;
        });
    }

    /** Re-opens the rest of the range, pinned to the first ETag, when the stream fails mid-way. */
    private final class ResumingStream extends BlockReadingInputStream {
        private final GetRequest pinned;
        private final ByteRange range;
        private InputStream current;
        private long position; // bytes delivered so far
        private int failures;

        ResumingStream(GetRequest request, ObjectContent first) {
            this.pinned = request.withIfMatch(first.meta().etag());
            this.range = first.range();
            this.current = first.stream();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            if (position >= range.length()) {
                return -1;
            }
            if (len == 0) {
                return 0;
            }
            while (true) {
                try {
                    int n = current.read(b, off, (int) Math.min(len, range.length() - position));
                    if (n < 0) {
                        throw new StoreException(StoreException.Kind.RETRYABLE, 0,
                                "stream of " + pinned.key() + " ended early at byte " + (range.offset() + position), null);
                    }
                    position += n;
                    return n;
                } catch (IOException e) {
                    closeQuietly(current);
                    failures++;
                    backoffOrThrow("read of " + pinned.key(), failures, e);
                    ByteRange rest = ByteRange.of(range.offset() + position, range.length() - position);
                    current = withRetries("resume GET " + pinned.key(), () -> delegate.get(pinned.withRange(rest)).stream());
                }
            }
        }

        @Override
        public void close() throws IOException {
            current.close();
        }

        private static void closeQuietly(InputStream in) {
            try {
                in.close();
            } catch (IOException ignored) {
                // the stream is already broken
            }
        }
    }
}
