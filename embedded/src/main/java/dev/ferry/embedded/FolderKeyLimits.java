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
 * The keys a folder can hold, said as S3 says it: the embedded store keeps each object as a file, so a key whose
 * segment (the text between slashes) is longer than a file name can be cannot be stored. A write of one is
 * {@code 400 KeyTooLongError}, a refusal every client and ferry's own write-back treat as final, instead of the
 * file system's "File name too long" as a retryable 500. Thread-safe.
 */
final class FolderKeyLimits extends ForwardingBlobStore {
    /** The longest file name ext4, XFS, btrfs and tmpfs take (NAME_MAX): a folder segment's limit. */
    static final int MAX_FOLDER_BYTES = 255;
    /**
     * The longest last segment: s3proxy's folder backend names a write's temporary file, and a multipart upload's
     * files, after it with up to 43 bytes more.
     */
    static final int MAX_NAME_BYTES = 212;
    /** The longest key with no folder that a multipart upload can write: its files are named after all of it. */
    static final int MAX_MULTIPART_TOP_LEVEL_BYTES = 170;

    FolderKeyLimits(BlobStore delegate) {
        super(delegate);
    }

    /** Why the embedded store cannot hold {@code key} (written by a multipart upload if {@code multipart}), in a sentence, or null when it can. */
    static String whyUnstorable(String key, boolean multipart) {
        String[] segments = key.split("/", -1);
        int topLevel = segments.length == 1 ? key.getBytes(StandardCharsets.UTF_8).length : 0;
        if (multipart && topLevel > MAX_MULTIPART_TOP_LEVEL_BYTES) {
            return "Your key is too long for a multipart upload to the embedded store, which keeps objects as files: a key with no"
                    + " '/' may be at most " + MAX_MULTIPART_TOP_LEVEL_BYTES + " bytes there, and this one is " + topLevel;
        }
        for (int i = 0; i < segments.length; i++) {
            int bytes = segments[i].getBytes(StandardCharsets.UTF_8).length;
            boolean last = i == segments.length - 1;
            if (bytes > (last ? MAX_NAME_BYTES : MAX_FOLDER_BYTES)) {
                return "Your key is too long for the embedded store, which keeps objects as files: a key's last segment may be at most "
                        + MAX_NAME_BYTES + " bytes and the others " + MAX_FOLDER_BYTES + ", and " + (last ? "its last" : "one")
                        + " is " + bytes;
            }
        }
        return null;
    }

    private static void requireStorable(String key, boolean multipart) {
        String why = whyUnstorable(key, multipart);
        if (why != null) {
            throw (S3Exception) S3Exception.builder().statusCode(400).message(why)
                    .awsErrorDetails(AwsErrorDetails.builder().errorCode("KeyTooLongError").errorMessage(why).build()).build();
        }
    }

    @Override
    public PutObjectResponse putBlob(PutObjectRequest request, java.io.InputStream input) {
        requireStorable(request.key(), false);
        return super.putBlob(request, input);
    }

    @Override
    public CopyObjectResponse copyBlob(CopyObjectRequest request) {
        requireStorable(request.destinationKey(), false);
        return super.copyBlob(request);
    }

    @Override
    public MultipartUpload initiateMultipartUpload(CreateMultipartUploadRequest request) {
        requireStorable(request.key(), true);
        return super.initiateMultipartUpload(request);
    }
}
