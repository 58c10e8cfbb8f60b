package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.RawHttp;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CopyObjectResponse;
import software.amazon.awssdk.services.s3.model.MetadataDirective;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * CopyObject and UploadPartCopy through the AWS SDK for Java v2, in each mode the daemon has (folder store,
 * S3 upstream, write-back): the bytes arrive, the rules for {@code x-amz-copy-source-range}, the
 * metadata directive and the source conditions hold, and under write-back a source still only on local
 * disk is copied from there.
 */
class CopyObjectTest {
    private static S3Exception s3Error(Throwable t) {
        return (S3Exception) t;
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] read(S3Client s3, String key) {
        return s3.getObjectAsBytes(b -> b.bucket("data").key(key)).asByteArray();
    }

    private static HttpResponse<String> flush(DaemonFixture ferry) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=30000"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void copyObject_copiesTheBytes_andKeepsTheSource(String mode, @TempDir Path dir) throws Exception {
        byte[] data = random(3 << 20, 1);
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            s3.putObject(b -> b.bucket("data").key("ckpt/step-1.pt"), RequestBody.fromBytes(data));
            CopyObjectResponse copied = s3.copyObject(b -> b.sourceBucket("data").sourceKey("ckpt/step-1.pt")
                    .destinationBucket("data").destinationKey("ckpt/latest.pt"));
            assertThat(copied.copyObjectResult().eTag()).isNotBlank();
            assertThat(copied.copyObjectResult().lastModified()).isAfter(java.time.Instant.now().minusSeconds(300));
            assertThat(read(s3, "ckpt/latest.pt")).isEqualTo(data);
            assertThat(read(s3, "ckpt/step-1.pt")).as("the source stays").isEqualTo(data);
            if (!mode.equals("write-back")) { // under write-back the ETag local-N names the local copy until it is uploaded
                assertThat(s3.headObject(b -> b.bucket("data").key("ckpt/latest.pt")).eTag()).isEqualTo(copied.copyObjectResult().eTag());
            }

            // a key with spaces and non-ASCII letters in the source header (percent-encoded by the SDK)
            s3.putObject(b -> b.bucket("data").key("dir/a b+é.txt"), RequestBody.fromString("odd"));
            s3.copyObject(b -> b.sourceBucket("data").sourceKey("dir/a b+é.txt").destinationBucket("data").destinationKey("odd-copy"));
            assertThat(new String(read(s3, "odd-copy"))).isEqualTo("odd");

            // an empty object copies as an empty object
            s3.putObject(b -> b.bucket("data").key("empty"), RequestBody.empty());
            s3.copyObject(b -> b.sourceBucket("data").sourceKey("empty").destinationBucket("data").destinationKey("empty-copy"));
            assertThat(read(s3, "empty-copy")).isEmpty();

            assertThat(flush(ferry).statusCode()).as("the copies are written back too").isEqualTo(200);
            if (ferry.root != null) {
                assertThat(Files.readAllBytes(ferry.root.resolve("data/ckpt/latest.pt"))).isEqualTo(data);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void copyObject_refusesWhatS3Refuses(String mode, @TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            s3.putObject(b -> b.bucket("data").key("src"), RequestBody.fromString("source"));
            String etag = s3.headObject(b -> b.bucket("data").key("src")).eTag();

            assertThatThrownBy(() -> s3.copyObject(b -> b.sourceBucket("data").sourceKey("missing").destinationBucket("data")
                    .destinationKey("dst"))).satisfies(e -> {
                        assertThat(s3Error(e).statusCode()).isEqualTo(404);
                        assertThat(s3Error(e).awsErrorDetails().errorCode()).isEqualTo("NoSuchKey");
                    });
            // onto itself with nothing changed: 400, as S3; with REPLACE it rewrites the object
            assertThatThrownBy(() -> s3.copyObject(b -> b.sourceBucket("data").sourceKey("src").destinationBucket("data")
                    .destinationKey("src"))).satisfies(e -> {
                        assertThat(s3Error(e).statusCode()).isEqualTo(400);
                        assertThat(s3Error(e).awsErrorDetails().errorCode()).isEqualTo("InvalidRequest");
                    });
            s3.copyObject(b -> b.sourceBucket("data").sourceKey("src").destinationBucket("data").destinationKey("src")
                    .metadataDirective(MetadataDirective.REPLACE).contentType("text/plain"));
            assertThat(new String(read(s3, "src"))).isEqualTo("source");
            flush(ferry); // under write-back: the store's ETag, not local-N (which changes when the upload lands), is the current one
            String current = s3.headObject(b -> b.bucket("data").key("src")).eTag();

            // the source's conditions: 412 when they fail, the copy when they hold
            assertThatThrownBy(() -> s3.copyObject(b -> b.sourceBucket("data").sourceKey("src").destinationBucket("data")
                    .destinationKey("dst").copySourceIfMatch("\"not-the-etag\""))).satisfies(e -> {
                        assertThat(s3Error(e).statusCode()).isEqualTo(412);
                        assertThat(s3Error(e).awsErrorDetails().errorCode()).isEqualTo("PreconditionFailed");
                    });
            assertThatThrownBy(() -> s3.copyObject(b -> b.sourceBucket("data").sourceKey("src").destinationBucket("data")
                    .destinationKey("dst").copySourceIfNoneMatch(current))).satisfies(e -> assertThat(s3Error(e).statusCode()).isEqualTo(412));
            s3.copyObject(b -> b.sourceBucket("data").sourceKey("src").destinationBucket("data").destinationKey("dst")
                    .copySourceIfMatch(current));
            assertThat(new String(read(s3, "dst"))).isEqualTo("source");
            // the destination's conditional write (If-None-Match: *) holds for copies too
            assertThatThrownBy(() -> s3.copyObject(b -> b.sourceBucket("data").sourceKey("src").destinationBucket("data")
                    .destinationKey("dst").overrideConfiguration(o -> o.putHeader("If-None-Match", "*"))))
                    .satisfies(e -> assertThat(s3Error(e).statusCode()).isEqualTo(412));
            assertThat(etag).isNotBlank();

            // x-amz-copy-source-range belongs to UploadPartCopy: on CopyObject it would copy less than asked
            RawHttp.Answer ranged = RawHttp.exchange(ferry.daemon.port(), "PUT /data/dst2 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                    + "x-amz-copy-source: /data/src\r\nx-amz-copy-source-range: bytes=0-1\r\nConnection: close\r\n\r\n");
            assertThat(ranged.status()).as(ranged.body()).isEqualTo(400);
            assertThat(ranged.body()).contains("<Code>InvalidArgument</Code>").contains("UploadPartCopy only");
            RawHttp.Answer directive = RawHttp.exchange(ferry.daemon.port(), "PUT /data/dst2 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                    + "x-amz-copy-source: data/src\r\nx-amz-metadata-directive: MERGE\r\nConnection: close\r\n\r\n");
            assertThat(directive.status()).as(directive.body()).isEqualTo(400);
            assertThat(directive.body()).contains("COPY or REPLACE");
            RawHttp.Answer versioned = RawHttp.exchange(ferry.daemon.port(), "PUT /data/dst2 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                    + "x-amz-copy-source: /data/src?versionId=abc\r\nConnection: close\r\n\r\n");
            assertThat(versioned.status()).as(versioned.body()).isEqualTo(501);
            RawHttp.Answer noKey = RawHttp.exchange(ferry.daemon.port(), "PUT /data/dst2 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                    + "x-amz-copy-source: /data\r\nConnection: close\r\n\r\n");
            assertThat(noKey.status()).as(noKey.body()).isEqualTo(400);
            assertThat(s3.listObjectsV2(b -> b.bucket("data").prefix("dst2")).contents()).as("nothing was written").isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void uploadPartCopy_copiesTheWholeSourceWithoutARange_andTheRangeWithOne(String mode, @TempDir Path dir) throws Exception {
        byte[] data = random(6 << 20, 2);
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            s3.putObject(b -> b.bucket("data").key("shard-0"), RequestBody.fromBytes(data));
            String id = s3.createMultipartUpload(b -> b.bucket("data").key("joined")).uploadId();
            String whole = s3.uploadPartCopy(b -> b.sourceBucket("data").sourceKey("shard-0").destinationBucket("data")
                    .destinationKey("joined").uploadId(id).partNumber(1)).copyPartResult().eTag();
            String ranged = s3.uploadPartCopy(b -> b.sourceBucket("data").sourceKey("shard-0").destinationBucket("data")
                    .destinationKey("joined").uploadId(id).partNumber(2).copySourceRange("bytes=100-199")).copyPartResult().eTag();
            for (String range : List.of("bytes=200-100", "bytes=5-", "0-10")) { // malformed: 400 InvalidArgument
                assertThatThrownBy(() -> s3.uploadPartCopy(b -> b.sourceBucket("data").sourceKey("shard-0").destinationBucket("data")
                        .destinationKey("joined").uploadId(id).partNumber(3).copySourceRange(range))).as(range).satisfies(e -> {
                            assertThat(s3Error(e).statusCode()).isEqualTo(400);
                            assertThat(s3Error(e).awsErrorDetails().errorCode()).isEqualTo("InvalidArgument");
                        });
            }
            // well formed, past the source's end: InvalidRange, as S3 (and as a GET's Range)
            assertThatThrownBy(() -> s3.uploadPartCopy(b -> b.sourceBucket("data").sourceKey("shard-0").destinationBucket("data")
                    .destinationKey("joined").uploadId(id).partNumber(3).copySourceRange("bytes=0-" + data.length))).satisfies(e -> {
                        assertThat(s3Error(e).statusCode()).isEqualTo(416);
                        assertThat(s3Error(e).awsErrorDetails().errorCode()).isEqualTo("InvalidRange");
                    });
            s3.completeMultipartUpload(b -> b.bucket("data").key("joined").uploadId(id).multipartUpload(m -> m.parts(
                    CompletedPart.builder().partNumber(1).eTag(whole).build(), CompletedPart.builder().partNumber(2).eTag(ranged).build())));
            byte[] expected = new byte[data.length + 100];
            System.arraycopy(data, 0, expected, 0, data.length);
            System.arraycopy(data, 100, expected, data.length, 100);
            assertThat(read(s3, "joined")).isEqualTo(expected);
            assertThat(flush(ferry).statusCode()).isEqualTo(200);
            if (ferry.root != null) {
                assertThat(Files.readAllBytes(ferry.root.resolve("data/joined"))).isEqualTo(expected);
            }
        }
    }

    /**
     * Under write-back, a source whose upload cannot happen (its bucket vanished from the S3 upstream after
     * the daemon saw it) stays only on local disk; a copy of it must copy those bytes, and the copy itself is
     * written back to the store.
     */
    @Test
    void writeBack_copyOfAnObjectStillOnlyLocal_copiesTheLocalBytes(@TempDir Path dir) throws Exception {
        // a small PUT, all in the socket's buffer before the store answers it NoSuchBucket: at 1 MiB the store's early
        // answer could break the pipe under the SDK, an attempt with no answer, retried rather than reported failed
        byte[] data = random((100 << 10) + 3, 3);
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("write-back", "true").start(); S3Client s3 = ferry.sdk("a", "b")) {
            // write-back believes a bucket of an S3 upstream it has seen for 30 s: one that disappears from the store
            // under it takes the write, whose upload then fails, and the bytes stay local
            s3.createBucket(b -> b.bucket("gone"));
            s3.putObject(b -> b.bucket("gone").key("seen"), RequestBody.fromString("the bucket is seen"));
            assertThat(flush(ferry).statusCode()).isEqualTo(200);
            deleteTree(dir.resolve("upstream/gone"));
            s3.putObject(b -> b.bucket("gone").key("stuck/ckpt.pt"), RequestBody.fromBytes(data));
            assertThat(flush(ferry).statusCode()).as("the source's upload fails").isEqualTo(502);

            s3.copyObject(b -> b.sourceBucket("gone").sourceKey("stuck/ckpt.pt").destinationBucket("data").destinationKey("saved/ckpt.pt"));
            String id = s3.createMultipartUpload(b -> b.bucket("data").key("saved/part.pt")).uploadId();
            String etag = s3.uploadPartCopy(b -> b.sourceBucket("gone").sourceKey("stuck/ckpt.pt").destinationBucket("data")
                    .destinationKey("saved/part.pt").uploadId(id).partNumber(1).copySourceRange("bytes=10-1033")).copyPartResult().eTag();
            s3.completeMultipartUpload(b -> b.bucket("data").key("saved/part.pt").uploadId(id)
                    .multipartUpload(m -> m.parts(CompletedPart.builder().partNumber(1).eTag(etag).build())));
            flush(ferry);
            assertThat(Files.readAllBytes(dir.resolve("upstream/data/saved/ckpt.pt"))).as("uploaded").isEqualTo(data);
            assertThat(Files.readAllBytes(dir.resolve("upstream/data/saved/part.pt"))).isEqualTo(Arrays.copyOfRange(data, 10, 1034));
        }
    }

    static void deleteTree(Path dir) throws java.io.IOException {
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
