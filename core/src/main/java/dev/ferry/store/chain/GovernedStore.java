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
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Governs requests per key prefix so a job backs off before the store throttles it and recovers after: each
 * request waits for a concurrency slot and a token of its prefix's budget ({@link PrefixGovernor}), and
 * reports back whether the store answered SlowDown.
 *
 * <p>Put it below the retry decorator ({@code Retrying(Governed(...))}) so every attempt is governed and
 * every SlowDown is seen. Listing is governed under the listed prefix; bucket-level calls are not governed.
 *
 * <p>Thread-safe. Waiting for a concurrency slot polls at 1 ms of the injected clock.
 */
public final class GovernedStore extends ForwardingObjectStore {
    private static final long POLL_NANOS = 1_000_000L;

    private final GovernorConfig config;
    private final Clock clock;
    private final Map<String, PrefixGovernor> prefixes = new ConcurrentHashMap<>();

    public GovernedStore(ObjectStore delegate, GovernorConfig config) {
        this(delegate, config, Clock.system());
    }

    public GovernedStore(ObjectStore delegate, GovernorConfig config, Clock clock) {
        super(delegate);
        this.config = Objects.requireNonNull(config, "config is null");
        this.clock = Objects.requireNonNull(clock, "clock is null");
    }

    /** Per prefix: current rate (requests/s), concurrency limit and SlowDowns seen. */
    public record PrefixState(double rate, double concurrencyLimit, long throttles) {
    }

    /** A snapshot of every prefix seen so far, sorted by prefix. */
    public Map<String, PrefixState> state() {
        Map<String, PrefixState> out = new TreeMap<>();
        prefixes.forEach((p, g) -> out.put(p, new PrefixState(g.rate(), g.concurrencyLimit(), g.throttles())));
        return out;
    }

    @FunctionalInterface
    private interface Call<T> {
        T run() throws IOException;
    }

    private <T> T governed(String prefix, Call<T> call) throws IOException {
        PrefixGovernor governor = prefixes.computeIfAbsent(prefix, p -> new PrefixGovernor(config, clock.nanoTime()));
        try {
            while (!governor.tryEnter()) {
                clock.sleepNanos(POLL_NANOS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a request slot on " + prefix);
        }
        // A request counts from its reservation: one reserved at a rate since decreased must not decrease it again.
        long started = clock.nanoTime();
        try {
            long wait = governor.reserve(started);
            clock.sleepNanos(wait);
        } catch (InterruptedException e) {
            governor.cancel();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a request token on " + prefix);
        }
        boolean throttled = false;
        try {
            return call.run();
        } catch (StoreException e) {
            throttled = e.kind() == StoreException.Kind.THROTTLED;
            throw e;
        } finally {
            governor.exit(clock.nanoTime(), started, throttled);
        }
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        return governed(config.prefixOf(key), () -> delegate.head(key));
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        return governed(config.prefixOf(request.key()), () -> delegate.get(request));
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        return governed(config.prefixOf(request.bucket(), request.prefix()), () -> delegate.list(request));
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        return governed(config.prefixOf(key), () -> delegate.put(key, body));
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        governed(config.prefixOf(key), () -> {
            delegate.delete(key);
            return null;
        });
    }

    @Override
    public MultipartUpload startMultipart(ObjectKey key, ObjectAttributes attributes) throws IOException {
        return governed(config.prefixOf(key), () -> multipart().startMultipart(key, attributes));
    }

    @Override
    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        return governed(config.prefixOf(upload.key()), () -> multipart().uploadPart(upload, partNumber, body));
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        return governed(config.prefixOf(upload.key()), () -> multipart().completeMultipart(upload, parts));
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        governed(config.prefixOf(upload.key()), () -> {
            multipart().abortMultipart(upload);
            return null;
        });
    }
}
