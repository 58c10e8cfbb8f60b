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
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bounds how long a caller waits on a store that does not answer: the metadata of a HEAD, a LIST page, the
 * first byte of a GET (whose stream then flows at the store's pace), the answer to a DELETE, to starting or
 * aborting a multipart upload, to a bucket operation. A PUT or an UploadPart is bounded by the time the store
 * goes without taking a byte of the body or, once it has them all, without answering: a large body sent at
 * any pace is never cut, a store that stops reading (or never answers) is. Past the limit the caller gets a
 * retryable {@link StoreException} and the call below is interrupted; an answer that still arrives is closed.
 * Above {@link StoreChain}, the limit covers every retry: an origin that accepts connections and never
 * answers costs a caller the limit, not the retry budget of socket timeouts. Completing a multipart upload
 * is not bounded here: S3 may take minutes over a large one (it answers with whitespace meanwhile).
 *
 * <p>Each bounded call runs on a thread of its own from {@code threads}; the default makes virtual threads,
 * whose blocking socket reads end when they are interrupted (the socket is closed), so a call given up on
 * holds no connection. Thread-safe.
 */
public final class FirstByteTimeoutStore extends ForwardingObjectStore {
    /** How long an abandoned call is given to end after its interrupt, so that what it reports comes first. */
    private static final Duration ABANDON_WAIT = Duration.ofSeconds(1);
    private final Duration limit;
    private final ThreadFactory threads;
    private final Clock clock;

    public FirstByteTimeoutStore(ObjectStore delegate, Duration limit) {
        this(delegate, limit, Clock.system());
    }

    public FirstByteTimeoutStore(ObjectStore delegate, Duration limit, Clock clock) {
        this(delegate, limit, Thread.ofVirtual().name("ferry-first-byte-", 0).factory(), clock);
    }

    /** Bounds each call by {@code limit} of {@code clock}'s time, running it on a thread from {@code threads}. */
    public FirstByteTimeoutStore(ObjectStore delegate, Duration limit, ThreadFactory threads, Clock clock) {
        super(delegate);
        this.limit = Objects.requireNonNull(limit, "limit is null");
        this.threads = Objects.requireNonNull(threads, "threads is null");
        this.clock = Objects.requireNonNull(clock, "clock is null");
        if (limit.isNegative() || limit.isZero()) {
            throw new IllegalArgumentException("limit must be positive: " + limit);
        }
    }

    public Duration limit() {
        return limit;
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        return within("HEAD " + key, () -> delegate.head(key), meta -> { });
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        return within("GET " + request.key(), () -> delegate.get(request), ObjectContent::close);
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        return within("LIST s3://" + request.bucket() + "/" + request.prefix(), () -> delegate.list(request), page -> { });
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        Progress progress = new Progress();
        return within("PUT " + key, () -> delegate.put(key, progress.watch(body)), meta -> { }, progress);
    }

    @Override
    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        Progress progress = new Progress();
        return within("upload part " + partNumber + " of " + upload.key(), () -> multipart().uploadPart(upload, partNumber,
                progress.watch(body)), part -> { }, progress);
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        withinVoid("DELETE " + key, () -> delegate.delete(key));
    }

    @Override
    public MultipartUpload startMultipart(ObjectKey key, ObjectAttributes attributes) throws IOException {
        // an upload started after the caller gave up is left to the store's expiry of incomplete uploads
        return within("create multipart upload of " + key, () -> multipart().startMultipart(key, attributes), upload -> { });
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        withinVoid("abort multipart upload of " + upload.key(), () -> multipart().abortMultipart(upload));
    }

    @Override
    public void createBucket(String bucket) throws IOException {
        withinVoid("create bucket " + bucket, () -> super.createBucket(bucket));
    }

    @Override
    public void deleteBucket(String bucket) throws IOException {
        withinVoid("delete bucket " + bucket, () -> super.deleteBucket(bucket));
    }

    /**
     * When a write last made progress: the store took bytes of its body. Its body is read through
     * {@link #watch}, as a stream (not a file handed to the adapter whole), so that every read is seen.
     */
    private final class Progress {
        private final AtomicLong lastNanos = new AtomicLong(clock.nanoTime());

        long lastNanos() {
            return lastNanos.get();
        }

        void touch() {
            lastNanos.set(clock.nanoTime());
        }

        PutBody watch(PutBody body) {
            return new PutBody() {
                @Override
                public long length() {
                    return body.length();
                }

                @Override
                public InputStream open() throws IOException {
                    touch();
                    return new FilterInputStream(body.open()) {
                        @Override
                        public int read() throws IOException {
                            touch();
                            return super.read();
                        }

                        @Override
                        public int read(byte[] b, int off, int len) throws IOException {
                            touch();
                            return super.read(b, off, len);
                        }

                        @Override
                        public long skip(long n) throws IOException {
                            touch();
                            return super.skip(n);
                        }
                    };
                }

                @Override
                public ObjectAttributes attributes() {
                    return body.attributes();
                }
            };
        }
    }

    @FunctionalInterface
    private interface Call<T> {
        T run() throws IOException;
    }

    @FunctionalInterface
    private interface Discard<T> {
        void discard(T value) throws IOException;
    }

    @FunctionalInterface
    private interface Action {
        void run() throws IOException;
    }

    /** {@link #within} for a call that answers nothing: nothing is left to discard when it is abandoned. */
    private void withinVoid(String what, Action action) throws IOException {
        within(what, () -> {
            action.run();
            return Boolean.TRUE;
        }, done -> { });
    }

    private <T> T within(String what, Call<T> call, Discard<T> discard) throws IOException {
        return within(what, call, discard, null);
    }

    /** Runs {@code call}, waiting at most the limit past the start or, with {@code progress}, past its last progress. */
    private <T> T within(String what, Call<T> call, Discard<T> discard, Progress progress) throws IOException {
        long start = clock.nanoTime();
        CompletableFuture<T> answer = new CompletableFuture<>();
        Thread worker = threads.newThread(() -> {
            try {
                T value = call.run();
                if (!answer.complete(value)) {
                    discard.discard(value); // the reader gave up on it: nobody else will close it
                }
            } catch (Throwable e) {
                answer.completeExceptionally(e);
            }
        });
        worker.start();
        try {
            while (!answer.isDone()) {
                long wait = (progress == null ? start : progress.lastNanos()) + limit.toNanos() - clock.nanoTime();
                if (wait <= 0) {
                    String why = progress == null ? ": no answer within " + describe(limit)
                            : ": the store took no bytes and gave no answer for " + describe(limit);
                    Abandoned abandoned = new Abandoned(what + why + " (first-byte timeout)");
                    if (answer.completeExceptionally(abandoned)) {
                        worker.interrupt();
                        // the attempt ends where it ran, and a write that may still land is reported there: wait for that
                        abandoned.ended = worker.join(ABANDON_WAIT);
                    }
                    break;
                }
                try {
                    answer.get(wait, TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    // the limit is counted from the last progress: look again
                }
            }
        } catch (InterruptedException e) {
            if (answer.completeExceptionally(new InterruptedIOException("interrupted while waiting for " + what))) {
                worker.interrupt();
            }
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            // the call's own failure: rethrown as it is below
        }
        try {
            return answer.join(); // done by now: the value, the call's failure, or the timeout
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IOException(what + ": " + cause, cause);
        }
    }

    /**
     * A call given up on at the limit (retryable). The attempt it was waiting on is interrupted below, where a
     * {@link RetryingStore} reports it, if it was a write that may still land ({@link RetryingStore#onUnansweredWrite}):
     * this failure says nothing of its own about what reached the store.
     */
    public static final class Abandoned extends StoreException {
        private static final long serialVersionUID = 1L;
        private volatile boolean ended;

        Abandoned(String message) {
            super(Kind.RETRYABLE, 0, message, null);
        }

        /** True when the interrupted call had ended by the time this was thrown (what it reported is known). */
        public boolean callEnded() {
            return ended;
        }
    }

    /** {@code 10 s}, {@code 1500 ms}. */
    static String describe(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}
