package dev.ferry.s3client;

import dev.ferry.store.BucketOperations;
import dev.ferry.store.ByteRange;
import dev.ferry.store.Checksum;
import dev.ferry.store.CompletedPart;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.MultipartOperations;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PartRanges;
import dev.ferry.store.PendingUploads;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.DefaultRetryStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.BucketAlreadyOwnedByYouException;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/**
 * An {@link ObjectStore} over S3 or an S3-compatible server, on the AWS SDK for Java v2's sync client.
 *
 * <p>Choices, and why:
 * <ul>
 *   <li>The SDK's own retries are off: {@link dev.ferry.store.chain.RetryingStore} and
 *       {@link dev.ferry.store.chain.GovernedStore} above this store retry and pace, and must see every SlowDown.
 *   <li>Flexible checksums only where an operation requires them: S3-compatible servers (older MinIO, GCS
 *       interop, s3proxy) reject or ignore the trailing checksums SDKs send by default since 2025.
 * </ul>
 * Each call is one request, so that the decorators above see, pace and count every request on the wire;
 * long reads become parallel ranged GETs in {@link dev.ferry.store.chain.ParallelReadStore} at the top of the
 * chain ({@link dev.ferry.store.chain.StoreChain}).
 * Failures are classified into {@link StoreException} kinds here, where they enter.
 *
 * <p>Thread-safe.
 */
public final class S3ObjectStore implements ObjectStore, BucketOperations, MultipartOperations, PendingUploads, PartRanges {
    /** The most uploads one listing gathers (100 pages of S3's 1000): the rest are not seen. */
    static final int MAX_LISTED_UPLOADS = 100_000;

    private final S3StoreConfig config;
    private final S3Client s3;
    private final Clock clock;

    /** A store on the real clock. */
    public S3ObjectStore(S3StoreConfig config) {
        this(config, java.util.Map.of());
    }

    /** A store on the real clock whose every request carries {@code headers} too (ferry's daemons use one to talk to each other). */
    public S3ObjectStore(S3StoreConfig config, java.util.Map<String, String> headers) {
        this(config, headers, Clock.system());
    }

    /**
     * A store whose every request carries {@code headers} too; {@code clock} gives a PUT its last-modified time
     * (S3 answers a PUT without one).
     */
    public S3ObjectStore(S3StoreConfig config, java.util.Map<String, String> headers, Clock clock) {
        this.config = Objects.requireNonNull(config, "config is null");
        this.clock = Objects.requireNonNull(clock, "clock is null");
        S3ClientBuilder builder = S3Client.builder()
                .region(Region.of(config.region()))
                .forcePathStyle(config.pathStyle())
                .credentialsProvider(config.credentials().provider())
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .overrideConfiguration(o -> {
                    o.retryStrategy(DefaultRetryStrategy.doNotRetry());
                    headers.forEach(o::putHeader);
                })
                .httpClientBuilder(ApacheHttpClient.builder()
                        .maxConnections(config.maxConnections())
                        .connectionTimeout(config.connectTimeout())
                        .socketTimeout(config.socketTimeout()));
        if (config.endpoint() != null) {
            builder.endpointOverride(config.endpoint());
        }
        this.s3 = builder.build();
    }

    public S3StoreConfig config() {
        return config;
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        // with the object's checksum, when the store keeps one: ferry answers it to clients that ask
        HeadObjectResponse r = SdkCalls.call("HEAD " + key, key, () ->
                s3.headObject(HeadObjectRequest.builder().bucket(key.bucket()).key(key.key()).checksumMode(ChecksumMode.ENABLED).build()));
        ObjectAttributes a = S3Attributes.of(r.contentType(), r.contentEncoding(), r.cacheControl(), r.contentDisposition(),
                r.contentLanguage(), r.expiresString(), r.metadata());
        a = S3Attributes.withChecksum(a, r.checksumCRC32(), r.checksumCRC32C(), r.checksumCRC64NVME(), r.checksumSHA1(), r.checksumSHA256(),
                r.checksumTypeAsString(), r.eTag());
        return new ObjectMeta(key, r.contentLength(), r.eTag(), r.versionId(), lastModified(r.lastModified()), a);
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        ObjectKey key = request.key();
        GetObjectRequest.Builder b = GetObjectRequest.builder().bucket(key.bucket()).key(key.key());
        if (request.range() != null) {
            b.range(request.range().toHttpHeader());
        }
        if (request.ifMatch() != null) {
            b.ifMatch("\"" + request.ifMatch() + "\"");
        }
        if (request.checksumAnswerable()) {
            // as a header, not the SDK's checksumMode: the SDK would then check the value itself, and refuse a
            // composite one an upstream names without its -N (moto); ferry keeps what the store answers as a HEAD's
            b.overrideConfiguration(o -> o.putHeader("x-amz-checksum-mode", "ENABLED"));
        }
        GetObjectRequest get = b.build();
        String what = "GET " + key + (request.range() == null ? "" : " " + request.range().toHttpHeader());
        ResponseInputStream<GetObjectResponse> in = SdkCalls.call(what, key, () -> s3.getObject(get));
        GetObjectResponse r = in.response();
        long total = request.range() == null ? r.contentLength() : totalSize(r, key);
        ObjectAttributes a = S3Attributes.of(r.contentType(), r.contentEncoding(), r.cacheControl(), r.contentDisposition(),
                r.contentLanguage(), r.expiresString(), r.metadata());
        if (request.checksumAnswerable()) {
            a = S3Attributes.withChecksum(a, r.checksumCRC32(), r.checksumCRC32C(), r.checksumCRC64NVME(), r.checksumSHA1(), r.checksumSHA256(),
                    r.checksumTypeAsString(), r.eTag());
        }
        ObjectMeta meta = new ObjectMeta(key, total, r.eTag(), r.versionId(), lastModified(r.lastModified()), a);
        ByteRange range;
        if (request.range() == null) {
            range = total == 0 ? null : ByteRange.of(0, total);
        } else {
            range = request.range().clip(total);
            if (range == null) {
                in.close();
                throw new StoreException(StoreException.Kind.FATAL, 416, what + ": starts past the end (" + total + " bytes)", null);
            }
        }
        return new ObjectContent(meta, range, new AbortingStream(in, r.contentLength() == null ? -1 : r.contentLength()));
    }

    private static long totalSize(GetObjectResponse r, ObjectKey key) throws StoreException {
        String contentRange = r.contentRange();
        if (contentRange != null) {
            int slash = contentRange.lastIndexOf('/');
            if (slash >= 0 && !contentRange.endsWith("*")) {
                return Long.parseLong(contentRange.substring(slash + 1).trim());
            }
        }
        if (r.contentLength() != null && contentRange == null) {
            return r.contentLength(); // a server that ignored the Range header sent it all
        }
        throw new StoreException(StoreException.Kind.FATAL, 0, "no object size in the response for " + key
                + " (Content-Range: " + contentRange + ")", null);
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        ListObjectsV2Request.Builder b = ListObjectsV2Request.builder()
                .bucket(request.bucket())
                .prefix(request.prefix())
                .maxKeys(request.maxKeys());
        if (request.delimiter() != null) {
            b.delimiter(request.delimiter());
        }
        if (request.continuationToken() != null) {
            b.continuationToken(request.continuationToken());
        } else if (request.startAfter() != null) {
            b.startAfter(request.startAfter());
        }
        ListObjectsV2Request list = b.build();
        ListObjectsV2Response r = SdkCalls.call("LIST s3://" + request.bucket() + "/" + request.prefix(), null, () -> s3.listObjectsV2(list));
        List<ObjectMeta> objects = new ArrayList<>(r.contents().size());
        for (S3Object o : r.contents()) {
            // a listing names an object's checksum algorithm, not its value: kept as ferry keeps a declared one
            Checksum.Algorithm algorithm = o.hasChecksumAlgorithm() && !o.checksumAlgorithm().isEmpty()
                    ? Checksum.Algorithm.named(o.checksumAlgorithmAsStrings().get(0)) : null;
            Checksum.Type type = Checksum.Type.named(o.checksumTypeAsString());
            ObjectAttributes a = algorithm == null ? ObjectAttributes.NONE
                    : new Checksum(algorithm, type != null ? type : Checksum.defaultType(algorithm), null).applyTo(ObjectAttributes.NONE);
            objects.add(new ObjectMeta(ObjectKey.of(request.bucket(), o.key()), o.size(), o.eTag(), null, lastModified(o.lastModified()), a));
        }
        List<String> prefixes = r.commonPrefixes().stream().map(CommonPrefix::prefix).toList();
        String next = Boolean.TRUE.equals(r.isTruncated()) ? r.nextContinuationToken() : null;
        return new ListPage(objects, prefixes, next);
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        ObjectAttributes a = body.attributes();
        PutObjectRequest.Builder b = PutObjectRequest.builder().bucket(key.bucket()).key(key.key()).contentLength(body.length())
                .contentType(a.get("content-type") == null ? "application/octet-stream" : a.get("content-type"))
                .contentEncoding(a.get("content-encoding")).cacheControl(a.get("cache-control"))
                .contentDisposition(a.get("content-disposition")).contentLanguage(a.get("content-language")).metadata(a.userMetadata());
        S3Attributes.expires(b, a);
        Checksum checksum = Checksum.of(a);
        if (checksum != null && checksum.type() == Checksum.Type.FULL_OBJECT) { // the store checks it, and keeps it
            S3Attributes.value(checksum, b::checksumCRC32, b::checksumCRC32C, b::checksumCRC64NVME, b::checksumSHA1, b::checksumSHA256);
        }
        PutObjectRequest put = b.build();
        PutObjectResponse r = SdkCalls.call("PUT " + key, key, () -> s3.putObject(put, requestBody(body)));
        // S3 does not return Last-Modified on PUT; the acknowledgement time is close enough for ferry's uses.
        return new ObjectMeta(key, body.length(), r.eTag(), r.versionId(), clock.now(), a);
    }

    private static RequestBody requestBody(PutBody body) {
        if (body.file() != null) {
            return RequestBody.fromFile(body.file());
        }
        return RequestBody.fromContentProvider(() -> {
            try {
                return body.open();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, body.length(), "application/octet-stream");
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        SdkCalls.call("DELETE " + key, key, () -> s3.deleteObject(DeleteObjectRequest.builder().bucket(key.bucket()).key(key.key()).build()));
    }

    @Override
    public MultipartUpload startMultipart(ObjectKey key, ObjectAttributes a) throws IOException {
        CreateMultipartUploadRequest.Builder b = CreateMultipartUploadRequest.builder().bucket(key.bucket()).key(key.key())
                .contentType(a.get("content-type") == null ? "application/octet-stream" : a.get("content-type"))
                .contentEncoding(a.get("content-encoding")).cacheControl(a.get("cache-control"))
                .contentDisposition(a.get("content-disposition")).contentLanguage(a.get("content-language")).metadata(a.userMetadata());
        S3Attributes.expires(b, a);
        Checksum declared = Checksum.declaredIn(a);
        if (declared != null) {
            b.checksumAlgorithm(S3Attributes.algorithm(declared.algorithm())).checksumType(declared.type().name());
        }
        CreateMultipartUploadRequest create = b.build();
        String id = SdkCalls.call("create multipart upload of " + key, key, () -> s3.createMultipartUpload(create)).uploadId();
        return new MultipartUpload(key, id);
    }

    @Override
    public CompletedPart uploadPart(MultipartUpload upload, int partNumber, PutBody body) throws IOException {
        ObjectKey key = upload.key();
        UploadPartRequest.Builder b = UploadPartRequest.builder().bucket(key.bucket()).key(key.key())
                .uploadId(upload.uploadId()).partNumber(partNumber).contentLength(body.length());
        Checksum checksum = Checksum.of(body.attributes()); // the part's, when its client sent one
        S3Attributes.value(checksum, b::checksumCRC32, b::checksumCRC32C, b::checksumCRC64NVME, b::checksumSHA1, b::checksumSHA256);
        UploadPartRequest part = b.build();
        String etag = SdkCalls.call("upload part " + partNumber + " of " + key, key, () -> s3.uploadPart(part, requestBody(body))).eTag();
        return new CompletedPart(partNumber, etag, checksum != null && checksum.type() == Checksum.Type.FULL_OBJECT ? checksum : null);
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, List<CompletedPart> parts) throws IOException {
        ObjectKey key = upload.key();
        List<software.amazon.awssdk.services.s3.model.CompletedPart> sdkParts = parts.stream()
                .map(p -> {
                    software.amazon.awssdk.services.s3.model.CompletedPart.Builder b = software.amazon.awssdk.services.s3.model.CompletedPart
                            .builder().partNumber(p.partNumber()).eTag("\"" + p.etag() + "\"");
                    S3Attributes.value(p.checksum(), b::checksumCRC32, b::checksumCRC32C, b::checksumCRC64NVME, b::checksumSHA1, b::checksumSHA256);
                    return b.build();
                })
                .toList();
        CompleteMultipartUploadRequest complete = CompleteMultipartUploadRequest.builder()
                .bucket(key.bucket()).key(key.key()).uploadId(upload.uploadId())
                .multipartUpload(CompletedMultipartUpload.builder().parts(sdkParts).build()).build();
        CompleteMultipartUploadResponse r = SdkCalls.call("complete multipart upload of " + key, key, () -> s3.completeMultipartUpload(complete));
        ObjectMeta head = head(key); // the response carries no size
        return new ObjectMeta(key, head.size(), r.eTag() != null ? r.eTag() : head.etag(),
                r.versionId() != null ? r.versionId() : head.versionId(), head.lastModified(), head.attributes());
    }

    @Override
    public void abortMultipart(MultipartUpload upload) throws IOException {
        ObjectKey key = upload.key();
        SdkCalls.call("abort multipart upload of " + key, key, () -> s3.abortMultipartUpload(AbortMultipartUploadRequest.builder()
                .bucket(key.bucket()).key(key.key()).uploadId(upload.uploadId()).build()));
    }

    /**
     * A HEAD of the part, pinned to the object's ETag: S3 (and MinIO) answer it with the part's {@code Content-Range}.
     * Null when the store does not say where the part lies: it does not serve parts (s3proxy: 501), answers no
     * {@code Content-Range} (moto), or holds the pin against the part's own ETag (moto: 412).
     */
    @Override
    public ByteRange partRange(ObjectKey key, String etag, int partNumber) throws IOException {
        HeadObjectResponse r;
        try {
            r = SdkCalls.call("HEAD " + key + " part " + partNumber, key, () -> s3.headObject(HeadObjectRequest.builder().bucket(key.bucket())
                    .key(key.key()).partNumber(partNumber).ifMatch("\"" + etag + "\"").build()));
        } catch (StoreException e) {
            if (e.httpStatus() == 501 || e.kind() == StoreException.Kind.PRECONDITION_FAILED) {
                return null;
            }
            throw e;
        }
        String range = r.contentRange();
        if (range == null || !range.startsWith("bytes ")) {
            return null; // a length without an offset cannot place the part
        }
        String span = range.substring("bytes ".length(), range.indexOf('/') < 0 ? range.length() : range.indexOf('/'));
        int dash = span.indexOf('-');
        long first = Long.parseLong(span.substring(0, dash).trim());
        long last = Long.parseLong(span.substring(dash + 1).trim());
        return ByteRange.of(first, last - first + 1);
    }

    /** The bucket's multipart uploads in progress under {@code prefix}, every page of them (at most {@value #MAX_LISTED_UPLOADS}). */
    @Override
    public List<Upload> listUploads(String bucket, String prefix) throws IOException {
        List<Upload> out = new ArrayList<>();
        String keyMarker = null;
        String idMarker = null;
        while (out.size() < MAX_LISTED_UPLOADS) {
            ListMultipartUploadsRequest.Builder b = ListMultipartUploadsRequest.builder().bucket(bucket).prefix(prefix);
            if (keyMarker != null) {
                b.keyMarker(keyMarker).uploadIdMarker(idMarker);
            }
            ListMultipartUploadsRequest list = b.build();
            ListMultipartUploadsResponse r = SdkCalls.call("LIST multipart uploads s3://" + bucket + "/" + prefix, null, () -> s3.listMultipartUploads(list));
            for (software.amazon.awssdk.services.s3.model.MultipartUpload u : r.uploads()) {
                out.add(new Upload(ObjectKey.of(bucket, u.key()), u.uploadId(), lastModified(u.initiated())));
            }
            if (!Boolean.TRUE.equals(r.isTruncated()) || r.nextKeyMarker() == null) {
                break;
            }
            keyMarker = r.nextKeyMarker();
            idMarker = r.nextUploadIdMarker();
        }
        return out;
    }

    /**
     * Aborts nothing: an S3 bucket's unfinished uploads are its owner's to expire (a lifecycle rule), and may be
     * another client's, which ferry does not know to be abandoned.
     */
    @Override
    public int expireUploads(Instant cutoff) {
        return 0;
    }

    /** What {@link #probe} found: nothing wrong ({@code problem} null), a warning, or a reason not to start ({@code fatal}). */
    public record Probe(boolean fatal, String problem) {
        static final Probe FINE = new Probe(false, null);
    }

    /**
     * Checks the endpoint answers as an S3 store with these credentials, as a daemon does before it says it is ready:
     * the credentials are found (the SDK's chain, when none were given), an unsigned {@code GET /} answers with S3's XML
     * (a bucket list or an S3 error, not a web page), and a signed bucket list is not refused for the keys
     * ({@code AccessDenied}, keys for one bucket, is fine). Missing or refused credentials and a non-S3 answer are
     * fatal; no answer at all is a warning (the store may come up later). One sentence each.
     */
    public Probe probe() {
        if (config.credentials().isDefaultChain()) {
            try {
                config.credentials().provider().resolveCredentials();
            } catch (SdkException e) {
                return new Probe(true, "no credentials for it were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                        + "(or AWS_PROFILE, or run where an instance role applies)");
            }
        }
        if (config.endpoint() != null) {
            try (java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder().connectTimeout(config.connectTimeout()).build()) {
                java.net.http.HttpResponse<String> r = http.send(java.net.http.HttpRequest.newBuilder(config.endpoint().resolve("/"))
                        .timeout(config.socketTimeout()).GET().build(), java.net.http.HttpResponse.BodyHandlers.ofString());
                String body = r.body();
                if (!body.contains("<ListAllMyBucketsResult") && !body.contains("<Error")) {
                    return new Probe(true, "it does not answer as an S3 endpoint (GET / answered " + r.statusCode()
                            + " without S3's XML: is it the store's API address?)");
                }
            } catch (IOException e) {
                return new Probe(false, "it did not answer (" + e + "): ferry serves, and reads fail until it does");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Probe.FINE;
            }
        }
        try {
            s3.listBuckets();
        } catch (S3Exception e) {
            String code = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
            if (code != null && java.util.Set.of("InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken").contains(code)) {
                return new Probe(true, "it refused ferry's credentials (" + code + "): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
            }
        } catch (SdkException e) {
            return new Probe(false, "it did not answer a bucket list (" + e.getMessage() + ")");
        }
        return Probe.FINE;
    }

    @Override
    public List<BucketOperations.Bucket> listBuckets() throws IOException {
        return SdkCalls.call("LIST buckets", null, () -> s3.listBuckets()).buckets().stream()
                .map(b -> new BucketOperations.Bucket(b.name(), lastModified(b.creationDate())))
                .sorted(java.util.Comparator.comparing(BucketOperations.Bucket::name)).toList();
    }

    @Override
    public void deleteBucket(String bucket) throws IOException {
        ObjectKey.validateBucket(bucket);
        SdkCalls.call("DELETE bucket " + bucket, null, () -> s3.deleteBucket(b -> b.bucket(bucket)));
    }

    @Override
    public void createBucket(String bucket) throws IOException {
        ObjectKey.validateBucket(bucket);
        try {
            SdkCalls.call("CREATE bucket " + bucket, null, () -> s3.createBucket(b -> b.bucket(bucket)));
        } catch (StoreException e) {
            if (!(e.getCause() instanceof BucketAlreadyOwnedByYouException)) {
                throw e;
            }
        }
    }

    @Override
    public void close() {
        s3.close();
    }

    private static Instant lastModified(Instant t) {
        return t == null ? Instant.EPOCH : t;
    }
}
