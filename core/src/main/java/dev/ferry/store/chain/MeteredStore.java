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
import dev.ferry.store.Prices;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Counts what crosses into the store below: requests by operation (failed ones too, as the store bills
 * them), bytes read (egress) and written, failures by kind, and the first-byte latency of every request
 * (for a GET, until the first byte of the body arrives). Prices turn the counts into an estimated cost.
 *
 * <p>Put it directly above the store it measures, below retries and the governor, so every attempt counts.
 * Thread-safe; counters are {@link LongAdder}s and the histogram an HdrHistogram {@link Recorder}.
 */
public final class MeteredStore extends ForwardingObjectStore {
    /** Operations as billed: GET and HEAD are GET-class; everything else is PUT-class. */
    public enum Op {
        HEAD(false), GET(false), LIST(true), PUT(true), DELETE(false), MULTIPART(true);

        private final boolean putClass;

        Op(boolean putClass) {
            this.putClass = putClass;
        }

        public boolean putClass() {
            return putClass;
        }
    }

    private final Prices prices;
    private final Clock clock;
    private final Map<Op, LongAdder> requests = new EnumMap<>(Op.class);
    private final Map<StoreException.Kind, LongAdder> failures = new EnumMap<>(StoreException.Kind.class);
    private final LongAdder egress = new LongAdder();
    private final LongAdder ingress = new LongAdder();
    private final Recorder firstByte = new Recorder(TimeUnit.MINUTES.toMicros(10), 3);
    private final Histogram firstByteTotal = new Histogram(TimeUnit.MINUTES.toMicros(10), 3);
    /** Sum over GETs of the time from the request to the stream's close: its difference over an interval, by the interval, is the mean number of reads in flight (Little's law). */
    private final LongAdder getNanos = new LongAdder();
    /** Sum over GETs of the time to the first byte. */
    private final LongAdder firstByteNanos = new LongAdder();

    public MeteredStore(ObjectStore delegate, Prices prices) {
        this(delegate, prices, Clock.system());
    }

    public MeteredStore(ObjectStore delegate, Prices prices, Clock clock) {
        super(delegate);
        this.prices = Objects.requireNonNull(prices, "prices is null");
        this.clock = Objects.requireNonNull(clock, "clock is null");
        for (Op op : Op.values()) {
            requests.put(op, new LongAdder());
        }
        for (StoreException.Kind kind : StoreException.Kind.values()) {
            failures.put(kind, new LongAdder());
        }
    }

    /** Everything counted since this store was made. */
    public MeterSnapshot snapshot() {
        Map<Op, Long> req = new EnumMap<>(Op.class);
        requests.forEach((op, n) -> req.put(op, n.sum()));
        Map<StoreException.Kind, Long> fail = new EnumMap<>(StoreException.Kind.class);
        failures.forEach((k, n) -> fail.put(k, n.sum()));
        long p50;
        long p99;
        long max;
        synchronized (firstByteTotal) {
            firstByteTotal.add(firstByte.getIntervalHistogram());
            p50 = firstByteTotal.getValueAtPercentile(50);
            p99 = firstByteTotal.getValueAtPercentile(99);
            max = firstByteTotal.getMaxValue();
        }
        long getClass = 0;
        long putClass = 0;
        for (Map.Entry<Op, Long> e : req.entrySet()) {
            if (e.getKey().putClass()) {
                putClass += e.getValue();
            } else if (e.getKey() != Op.DELETE) { // DELETE is free on S3
                getClass += e.getValue();
            }
        }
        long egressBytes = egress.sum();
        return new MeterSnapshot(req, fail, egressBytes, ingress.sum(), p50, p99, max,
                prices.cost(egressBytes, getClass, putClass), getNanos.sum(), firstByteNanos.sum());
    }

    @FunctionalInterface
    private interface Call<T> {
        T run() throws IOException;
    }

    private <T> T measured(Op op, Call<T> call) throws IOException {
        requests.get(op).increment();
        long start = clock.nanoTime();
        try {
            T result = call.run();
            recordLatency(start);
            return result;
        } catch (IOException e) {
            failures.get(StoreException.classify(e)).increment();
            throw e;
        }
    }

    private void recordLatency(long start) {
        long micros = Math.max(0, (clock.nanoTime() - start) / 1000);
        firstByte.recordValue(Math.min(micros, TimeUnit.MINUTES.toMicros(10)));
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        return measured(Op.HEAD, () -> delegate.head(key));
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        requests.get(Op.GET).increment();
        long start = clock.nanoTime();
        ObjectContent content;
        try {
            content = delegate.get(request);
        } catch (IOException e) {
            failures.get(StoreException.classify(e)).increment();
            throw e;
        }
        if (content.length() == 0) {
            recordLatency(start);
            long took = clock.nanoTime() - start;
            getNanos.add(took);
            firstByteNanos.add(took);
            return content;
        }
        return new ObjectContent(content.meta(), content.range(), new CountingStream(content.stream(), start));
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        return measured(Op.LIST, () -> delegate.list(request));
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        ObjectMeta meta = measured(Op.PUT, () -> delegate.put(key, body));
        ingress.add(body.length());
        return meta;
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        measured(Op.DELETE, () -> {
            delegate.delete(key);
            return null;
        });
    }

    @Override
    public MultipartUpload startMultipart(ObjectKey key, ObjectAttributes attributes) throws IOException {
        return measured(Op.MULTIPART, () -> multipart().startMultipart(key, attributes));
    }

    @Override
    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        CompletedPart part = measured(Op.MULTIPART, () -> multipart().uploadPart(upload, partNumber, body));
        ingress.add(body.length());
        return part;
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        return measured(Op.MULTIPART, () -> multipart().completeMultipart(upload, parts));
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        measured(Op.MULTIPART, () -> {
            multipart().abortMultipart(upload);
            return null;
        });
    }

    /** Counts body bytes as egress and records first-byte latency on the first read. */
    private final class CountingStream extends FilterInputStream {
        private final long start;
        private boolean first = true;

        CountingStream(InputStream in, long start) {
            super(in);
            this.start = start;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                counted(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                counted(n);
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = super.skip(n);
            counted(skipped);
            return skipped;
        }

        private boolean closed;

        private void counted(long n) {
            if (first) {
                first = false;
                recordLatency(start);
                firstByteNanos.add(clock.nanoTime() - start);
            }
            egress.add(n);
        }

        @Override
        public void close() throws IOException {
            if (!closed) {
                closed = true;
                getNanos.add(clock.nanoTime() - start);
            }
            super.close();
        }
    }
}
