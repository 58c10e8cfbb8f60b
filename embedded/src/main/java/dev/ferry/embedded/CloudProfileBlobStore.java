package dev.ferry.embedded;

import dev.ferry.time.Clock;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import org.gaul.s3proxy.blobstore.domain.MultipartUpload;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectResponse;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListBucketsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.Part;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * Wraps s3proxy's storage backend with the {@link CloudProfile}: every request first passes the per-prefix
 * limit (or is refused with {@code 503 SlowDown}), then waits the first-byte latency; GET bodies are paced
 * to the per-connection and aggregate bandwidth caps.
 *
 * <p>Working at the backend, below s3proxy's HTTP handling, keeps the S3 protocol entirely s3proxy's: ferry
 * writes no S3 XML here. Thread-safe.
 */
final class CloudProfileBlobStore extends ForwardingBlobStore {
    private static final int CHUNK = 64 * 1024;

    private final CloudProfile profile;
    private final Clock clock;
    private final PrefixLimiter limiter;
    private final Pacer aggregate;
    private final LongAdder requests = new LongAdder();
    private final LongAdder slowDowns = new LongAdder();
    private final LongAdder bytesServed = new LongAdder();

    /** {@code clock} paces, refills the per-prefix limits and waits the first-byte latency. */
    CloudProfileBlobStore(BlobStore delegate, CloudProfile profile, Clock clock) {
        super(delegate);
        this.profile = profile;
        this.clock = clock;
        this.limiter = profile.prefixRequestRate() > 0
                ? new PrefixLimiter(profile.prefixRequestRate(), profile.prefixBurst().toNanos() / 1e9, profile.prefixDepth(), clock)
                : null;
        this.aggregate = profile.aggregateBandwidth() > 0 ? new Pacer(profile.aggregateBandwidth(), clock) : null;
    }

    EmbeddedStore.Stats stats() {
        return new EmbeddedStore.Stats(requests.sum(), slowDowns.sum(), bytesServed.sum());
    }

    /** Admission and first-byte latency for one request on {@code key} (null for bucket-level calls). */
    private void arrive(String bucket, String key) {
        requests.increment();
        if (limiter != null && !limiter.admit(bucket, key)) {
            slowDowns.increment();
            throw slowDown();
        }
        long latency = profile.firstByteLatency().toNanos();
        if (latency > 0) {
            try {
                clock.sleepNanos(latency);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw S3Exception.builder().statusCode(500).message("interrupted").build();
            }
        }
    }

    static S3Exception slowDown() {
        return (S3Exception) S3Exception.builder()
                .statusCode(503)
                .message("Please reduce your request rate.")
                .awsErrorDetails(AwsErrorDetails.builder()
                        .errorCode("SlowDown")
                        .errorMessage("Please reduce your request rate.")
                        .build())
                .build();
    }

    @Override
    public ListBucketsResponse list() {
        arrive("", null);
        return super.list();
    }

    @Override
    public ListObjectsV2Response list(ListObjectsV2Request request) {
        arrive(request.bucket(), request.prefix());
        return super.list(request);
    }

    @Override
    public HeadObjectResponse blobMetadata(HeadObjectRequest request) {
        arrive(request.bucket(), request.key());
        return super.blobMetadata(request);
    }

    @Override
    public ResponseInputStream<GetObjectResponse> getBlob(GetObjectRequest request) {
        arrive(request.bucket(), request.key());
        ResponseInputStream<GetObjectResponse> blob = super.getBlob(request);
        if (blob == null) {
            return null;
        }
        Pacer connection = profile.connectionBandwidth() > 0 ? new Pacer(profile.connectionBandwidth(), clock) : null;
        return new ResponseInputStream<>(blob.response(), new PacedStream(blob, connection));
    }

    @Override
    public PutObjectResponse putBlob(PutObjectRequest request, InputStream input) {
        arrive(request.bucket(), request.key());
        return super.putBlob(request, input);
    }

    @Override
    public DeleteObjectResponse removeBlob(DeleteObjectRequest request) {
        arrive(request.bucket(), request.key());
        if (!containerExists(request.bucket())) { // S3's answer; the filesystem backend deletes nothing and says 204
            throw (S3Exception) S3Exception.builder().statusCode(404).message("The specified bucket does not exist")
                    .awsErrorDetails(AwsErrorDetails.builder().errorCode("NoSuchBucket").errorMessage("The specified bucket does not exist").build())
                    .build();
        }
        return super.removeBlob(request);
    }

    @Override
    public MultipartUpload initiateMultipartUpload(CreateMultipartUploadRequest request) {
        arrive(request.bucket(), request.key());
        return super.initiateMultipartUpload(request);
    }

    @Override
    public UploadPartResponse uploadMultipartPart(MultipartUpload upload, UploadPartRequest request, InputStream input) {
        arrive(request.bucket(), request.key());
        return super.uploadMultipartPart(upload, request, input);
    }

    @Override
    public CompleteMultipartUploadResponse completeMultipartUpload(MultipartUpload upload, CompleteMultipartUploadRequest request) {
        arrive(request.bucket(), request.key());
        return super.completeMultipartUpload(upload, request);
    }

    @Override
    public void abortMultipartUpload(MultipartUpload upload) {
        arrive("", null);
        super.abortMultipartUpload(upload);
    }

    @Override
    public List<Part> listMultipartUpload(MultipartUpload upload) {
        return super.listMultipartUpload(upload);
    }

    /** A GET body paced to the connection's and the node's bandwidth, counted as served. */
    private final class PacedStream extends FilterInputStream {
        private final Pacer connection;

        PacedStream(InputStream in, Pacer connection) {
            super(in);
            this.connection = connection;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, Math.min(len, CHUNK));
            if (n > 0) {
                bytesServed.add(n);
                try {
                    if (connection != null) {
                        connection.acquire(n);
                    }
                    if (aggregate != null) {
                        aggregate.acquire(n);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while pacing");
                }
            }
            return n;
        }
    }
}
