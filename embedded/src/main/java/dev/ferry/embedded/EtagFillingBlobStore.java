package dev.ferry.embedded;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;

/**
 * Gives an ETag to files that were put into the served folder by other programs (s3proxy keeps ETags of
 * uploads in extended attributes, and files copied in have none). The ETag is a digest of size and
 * modification time, so rewriting a file changes it; it has the multipart form {@code <hex>-1} so that
 * clients do not mistake it for the MD5 of the content. Thread-safe.
 */
final class EtagFillingBlobStore extends ForwardingBlobStore {
    EtagFillingBlobStore(BlobStore delegate) {
        super(delegate);
    }

    static String etagFor(Long size, Instant lastModified) {
        try {
            MessageDigest md5 = MessageDigest.getInstance("MD5");
            byte[] digest = md5.digest((size + "/" + lastModified).getBytes(StandardCharsets.UTF_8));
            return "\"" + HexFormat.of().formatHex(digest) + "-1\"";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 is missing from this JVM", e);
        }
    }

    @Override
    public HeadObjectResponse blobMetadata(HeadObjectRequest request) {
        HeadObjectResponse r = super.blobMetadata(request);
        if (r == null || r.eTag() != null) {
            return r;
        }
        return r.toBuilder().eTag(etagFor(r.contentLength(), r.lastModified())).build();
    }

    @Override
    public ResponseInputStream<GetObjectResponse> getBlob(GetObjectRequest request) {
        ResponseInputStream<GetObjectResponse> blob = super.getBlob(request);
        if (blob == null || blob.response().eTag() != null) {
            return blob;
        }
        GetObjectResponse r = blob.response();
        long total = r.contentRange() != null && r.contentRange().contains("/")
                ? Long.parseLong(r.contentRange().substring(r.contentRange().lastIndexOf('/') + 1))
                : r.contentLength();
        return new ResponseInputStream<>(r.toBuilder().eTag(etagFor(total, r.lastModified())).build(), blob);
    }

    @Override
    public ListObjectsV2Response list(ListObjectsV2Request request) {
        ListObjectsV2Response r = super.list(request);
        if (r == null || r.contents().stream().allMatch(o -> o.eTag() != null)) {
            return r;
        }
        return r.toBuilder().contents(r.contents().stream()
                .map(o -> o.eTag() != null ? o : o.toBuilder().eTag(etagFor(o.size(), o.lastModified())).build())
                .toList()).build();
    }

}
