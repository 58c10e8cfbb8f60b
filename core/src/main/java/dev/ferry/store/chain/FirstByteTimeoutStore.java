package dev.ferry.store.chain;

import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Bounds how long a reader waits for the store to start answering: the metadata of a HEAD, a LIST page, the
 * first byte of a GET (whose stream then flows at the store's pace). Past the limit the reader gets a
 * retryable {@link StoreException} and the call below is interrupted; an answer that still arrives is closed.
 * Above {@link StoreChain}, the limit covers every retry: an origin that accepts connections and never
 * answers costs a reader the limit, not the retry budget of socket timeouts. Writes pass through unbounded:
 * their answer comes only after their last byte.
 *
 * <p>Each bounded call runs on a thread of its own from {@code threads}; the default makes virtual threads,
 * whose blocking socket reads end when they are interrupted (the socket is closed), so a call given up on
 * holds no connection. Thread-safe.
 */
public final class FirstByteTimeoutStore extends ForwardingObjectStore {
    private final Duration limit;
    private final ThreadFactory threads;

    public FirstByteTimeoutStore(ObjectStore delegate, Duration limit) {
        this(delegate, limit, Thread.ofVirtual().name("ferry-first-byte-", 0).factory());
    }

    public FirstByteTimeoutStore(ObjectStore delegate, Duration limit, ThreadFactory threads) {
        super(delegate);
        this.limit = Objects.requireNonNull(limit, "limit is null");
        this.threads = Objects.requireNonNull(threads, "threads is null");
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

    @FunctionalInterface
    private interface Call<T> {
        T run() throws IOException;
    }

    @FunctionalInterface
    private interface Discard<T> {
        void discard(T value) throws IOException;
    }

    private <T> T within(String what, Call<T> call, Discard<T> discard) throws IOException {
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
            answer.get(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            if (answer.completeExceptionally(new StoreException(StoreException.Kind.RETRYABLE, 0,
                    what + ": no answer within " + describe(limit) + " (first-byte timeout)", null))) {
                worker.interrupt();
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

    /** {@code 10 s}, {@code 1500 ms}. */
    static String describe(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}
