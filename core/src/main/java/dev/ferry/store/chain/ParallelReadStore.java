package dev.ferry.store.chain;

import dev.ferry.store.ByteRange;
import dev.ferry.store.Bytes;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Splits long reads into parallel ranged GETs: the first part streams straight to the reader while the
 * next {@code concurrency} parts are fetched ahead, each pinned (If-Match) to the first part's ETag, so the
 * bytes always belong to one version. Object stores cap each connection's bandwidth; parallel ranges are how
 * a reader gets the node's bandwidth. Parts fetched ahead wait in memory for their reader, at most
 * {@code maxBufferedBytes} of them for all reads together; past that, a read's parts are streamed one after
 * another as its reader gets to them (many readers at once fill the bandwidth then anyway).
 *
 * <p>Put it at the top of the chain, above retry and the governor, so that every part is retried,
 * governed and metered as the request it is.
 *
 * <p>Thread-safe. Owns a pool of daemon threads for part fetches, shut down by {@link #close()}.
 */
public final class ParallelReadStore extends ForwardingObjectStore {
    private final ParallelReadConfig config;
    private final ExecutorService executor;
    private final ParallelRangeStream.Budget budget;

    public ParallelReadStore(ObjectStore delegate, ParallelReadConfig config) {
        super(delegate);
        this.config = Objects.requireNonNull(config, "config is null");
        this.budget = new ParallelRangeStream.Budget(config.maxBufferedBytes());
        AtomicInteger threads = new AtomicInteger();
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "ferry-part-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    public ParallelReadConfig config() {
        return config;
    }

    /** Bytes of parts fetched ahead and held in memory for their readers now; at most {@code maxBufferedBytes}. */
    public long bufferedBytes() {
        return budget.taken();
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        ByteRange asked = request.range() == null ? ByteRange.from(0) : request.range();
        if (asked.length() <= config.partSize() || request.checksumAnswerable()) {
            // a read asking for the whole object's checksum is one GET: a store names none for a range
            return delegate.get(request);
        }
        ObjectContent first;
        try {
            first = delegate.get(request.withRange(ByteRange.of(asked.offset(), config.partSize())));
        } catch (StoreException e) {
            if (e.httpStatus() == 416 && request.range() == null) {
                return delegate.get(request); // an empty object: stores refuse any range of it
            }
            throw e;
        }
        ObjectMeta meta = first.meta();
        ByteRange range = asked.clip(meta.size());
        if (range == null || first.range() == null || first.range().end() >= range.end()) {
            return new ObjectContent(meta, range == null ? first.range() : range, first.stream());
        }
        GetRequest pinned = request.withIfMatch(meta.etag());
        ParallelRangeStream stream = new ParallelRangeStream(first.stream(), first.range().end(), range.end(),
                config.partSize(), config.concurrency(), (offset, length) -> {
                    try (ObjectContent part = delegate.get(pinned.withRange(ByteRange.of(offset, length)))) {
                        byte[] bytes = Bytes.read(part.stream(), length);
                        if (bytes.length != length) {
                            throw new StoreException(StoreException.Kind.RETRYABLE, 0, "short part of " + request.key()
                                    + " at " + offset + ": " + bytes.length + " of " + length + " bytes", null);
                        }
                        return bytes;
                    }
                }, (offset, length) -> delegate.get(pinned.withRange(ByteRange.of(offset, length))).stream(), budget, executor);
        return new ObjectContent(meta, range, stream);
    }

    @Override
    public void close() throws IOException {
        executor.shutdownNow();
        super.close();
    }
}
