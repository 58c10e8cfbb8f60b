package dev.ferry.store;

import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * A decorator that forwards every call to a delegate; subclasses override what they change. Implements
 * {@link BucketOperations} and {@link MultipartOperations} by forwarding when the delegate has them.
 */
public abstract class ForwardingObjectStore implements ObjectStore, BucketOperations, MultipartOperations {
    protected final ObjectStore delegate;

    protected ForwardingObjectStore(ObjectStore delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate is null");
    }

    public ObjectStore delegate() {
        return delegate;
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        return delegate.head(key);
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        return delegate.get(request);
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        return delegate.list(request);
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        return delegate.put(key, body);
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        delegate.delete(key);
    }

    @Override
    public MultipartUpload startMultipart(ObjectKey key, ObjectAttributes attributes) throws IOException {
        return multipart().startMultipart(key, attributes);
    }

    @Override
    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        return multipart().uploadPart(upload, partNumber, body);
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        return multipart().completeMultipart(upload, parts);
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        multipart().abortMultipart(upload);
    }

    @Override
    public List<Bucket> listBuckets() throws IOException {
        return buckets().listBuckets();
    }

    @Override
    public void deleteBucket(String bucket) throws IOException {
        buckets().deleteBucket(bucket);
    }

    @Override
    public void createBucket(String bucket) throws IOException {
        buckets().createBucket(bucket);
    }

    /** The delegate's multipart uploads, for the subclasses that change them; see {@link MultipartOperations#of}. */
    protected final MultipartOperations multipart() throws StoreException {
        return MultipartOperations.of(delegate);
    }

    private BucketOperations buckets() {
        if (delegate instanceof BucketOperations ops) {
            return ops;
        }
        throw new UnsupportedOperationException(delegate.getClass().getSimpleName() + " has no bucket operations");
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }
}
