package dev.ferry.embedded;

import java.nio.charset.StandardCharsets;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import org.gaul.s3proxy.blobstore.domain.MultipartUpload;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.s3.model.CopyObjectRequest;
import software.amazon.awssdk.services.s3.model.CopyObjectResponse;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The keys a folder can hold, said as S3 says it: the embedded store keeps each object as a file, so a key with a
 * segment (the text between slashes) over {@value #MAX_SEGMENT_BYTES} bytes of UTF-8, the longest file name Linux
 * file systems take, cannot be stored. A write of one is {@code 400 KeyTooLongError}, a refusal every client and
 * ferry's own write-back treat as final, instead of the file system's "File name too long" as a retryable 500.
 * Thread-safe.
 */
final class FolderKeyLimits extends ForwardingBlobStore {
    /** The longest file name ext4, XFS, btrfs and tmpfs take (NAME_MAX). */
    static final int MAX_SEGMENT_BYTES = 255;

    FolderKeyLimits(BlobStore delegate) {
        super(delegate);
    }

    /** The first segment of {@code key} longer than a file name may be, or null when every one fits. */
    static String tooLongSegment(String key) {
        for (String segment : key.split("/", -1)) {
            if (segment.getBytes(StandardCharsets.UTF_8).length > MAX_SEGMENT_BYTES) {
                return segment;
            }
        }
        return null;
    }

    private static void requireStorable(String key) {
        String segment = tooLongSegment(key);
        if (segment != null) {
            String message = "Your key is too long: the embedded store keeps objects as files, and a key's segments between"
                    + " slashes must be at most " + MAX_SEGMENT_BYTES + " bytes; one is " + segment.getBytes(StandardCharsets.UTF_8).length;
            throw (S3Exception) S3Exception.builder().statusCode(400).message(message)
                    .awsErrorDetails(AwsErrorDetails.builder().errorCode("KeyTooLongError").errorMessage(message).build()).build();
        }
    }

    @Override
    public PutObjectResponse putBlob(PutObjectRequest request, java.io.InputStream input) {
        requireStorable(request.key());
        return super.putBlob(request, input);
    }

    @Override
    public CopyObjectResponse copyBlob(CopyObjectRequest request) {
        requireStorable(request.destinationKey());
        return super.copyBlob(request);
    }

    @Override
    public MultipartUpload initiateMultipartUpload(CreateMultipartUploadRequest request) {
        requireStorable(request.key());
        return super.initiateMultipartUpload(request);
    }
}
