package dev.ferry.store;

import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts every call that reaches the store below it, by operation, and remembers the order, so tests
 * assert exact upstream request counts ("one GET, no HEAD"). Thread-safe.
 */
public final class TrackingStore extends ForwardingObjectStore {
    public enum Op { HEAD, GET, LIST, PUT, DELETE, START_MULTIPART, UPLOAD_PART, COMPLETE_MULTIPART, ABORT_MULTIPART }

    /** One call: what, on which key (or bucket/prefix for a listing), and for a GET the range asked. */
    public record Call(Op op, String target, ByteRange range) {
    }

    private final Map<Op, AtomicLong> counts = new EnumMap<>(Op.class);
    private final List<Call> calls = new ArrayList<>();

    public TrackingStore(ObjectStore delegate) {
        super(delegate);
        for (Op op : Op.values()) {
            counts.put(op, new AtomicLong());
        }
    }

    public long count(Op op) {
        return counts.get(op).get();
    }

    public long total() {
        return counts.values().stream().mapToLong(AtomicLong::get).sum();
    }

    public synchronized List<Call> calls() {
        return List.copyOf(calls);
    }

    public synchronized void reset() {
        counts.values().forEach(c -> c.set(0));
        calls.clear();
    }

    private synchronized void track(Op op, String target, ByteRange range) {
        counts.get(op).incrementAndGet();
        calls.add(new Call(op, target, range));
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        track(Op.HEAD, key.toString(), null);
        return delegate.head(key);
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        track(Op.GET, request.key().toString(), request.range());
        return delegate.get(request);
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        track(Op.LIST, "s3://" + request.bucket() + "/" + request.prefix(), null);
        return delegate.list(request);
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        track(Op.PUT, key.toString(), null);
        return delegate.put(key, body);
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        track(Op.DELETE, key.toString(), null);
        delegate.delete(key);
    }

    @Override
    public MultipartUpload startMultipart(ObjectKey key, ObjectAttributes attributes) throws IOException {
        track(Op.START_MULTIPART, key.toString(), null);
        return multipart().startMultipart(key, attributes);
    }

    @Override
    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        track(Op.UPLOAD_PART, upload.key().toString(), null);
        return multipart().uploadPart(upload, partNumber, body);
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        track(Op.COMPLETE_MULTIPART, upload.key().toString(), null);
        return multipart().completeMultipart(upload, parts);
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        track(Op.ABORT_MULTIPART, upload.key().toString(), null);
        multipart().abortMultipart(upload);
    }
}
