package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.DaemonFixture;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.Bucket;
import software.amazon.awssdk.services.s3.model.ListObjectVersionsResponse;
import software.amazon.awssdk.services.s3.model.ObjectVersion;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * What tools and test suites do around buckets, through the AWS SDK for Java v2: DeleteBucket (204 when
 * empty, 409 BucketNotEmpty otherwise, also when the only object is a write-back write not uploaded yet),
 * ListObjectVersions on an unversioned bucket, ListBuckets' creation dates, and the object store's own
 * error codes passed on unchanged.
 */
class BucketFidelityTest {
    private static S3Exception s3Error(Throwable t) {
        return (S3Exception) t;
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "s3"})
    void deleteBucket_emptyIs204_nonEmptyIs409BucketNotEmpty(String mode, @TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            s3.createBucket(b -> b.bucket("scratch"));
            s3.putObject(b -> b.bucket("scratch").key("deep/er/obj"), RequestBody.fromString("x"));
            assertThatThrownBy(() -> s3.deleteBucket(b -> b.bucket("scratch"))).satisfies(e -> {
                assertThat(s3Error(e).statusCode()).isEqualTo(409);
                assertThat(s3Error(e).awsErrorDetails().errorCode()).isEqualTo("BucketNotEmpty");
            });
            assertThat(s3.getObjectAsBytes(b -> b.bucket("scratch").key("deep/er/obj")).asUtf8String()).isEqualTo("x");
            s3.deleteObject(b -> b.bucket("scratch").key("deep/er/obj"));
            assertThat(s3.deleteBucket(b -> b.bucket("scratch")).sdkHttpResponse().statusCode()).isEqualTo(204);
            assertThat(s3.listBuckets().buckets()).extracting(Bucket::name).doesNotContain("scratch");
            assertThatThrownBy(() -> s3.deleteBucket(b -> b.bucket("scratch"))).satisfies(e -> {
                assertThat(s3Error(e).statusCode()).isEqualTo(404);
                assertThat(s3Error(e).awsErrorDetails().errorCode()).isEqualTo("NoSuchBucket");
            });
        }
    }

    /**
     * A write-back write the folder store refuses (a path segment over 255 bytes) stays on local disk: the
     * store's bucket is empty, but the bucket is not, and deleting it would orphan the write.
     */
    @Test
    void deleteBucket_withAWriteBackWriteNotUploaded_isBucketNotEmpty(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("write-back", "true").start(); S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            s3.createBucket(b -> b.bucket("wb-scratch"));
            // write-back believes a bucket of an S3 upstream it has seen for 30 s: remove it from the store under the
            // daemon, and the next write is taken, its upload refused, its bytes kept locally
            s3.putObject(b -> b.bucket("wb-scratch").key("seen"), RequestBody.fromString("seen"));
            assertThat(http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=30000"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
            CopyObjectTest.deleteTree(dir.resolve("upstream/wb-scratch"));
            String key = "only-local";
            s3.putObject(b -> b.bucket("wb-scratch").key(key), RequestBody.fromString("only local"));
            HttpResponse<String> fence = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=30000"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(fence.statusCode()).as("the store refuses the upload: " + fence.body()).isEqualTo(502);
            assertThatThrownBy(() -> s3.deleteBucket(b -> b.bucket("wb-scratch"))).satisfies(e -> {
                assertThat(s3Error(e).statusCode()).isEqualTo(409);
                assertThat(s3Error(e).awsErrorDetails().errorCode()).isEqualTo("BucketNotEmpty");
            });
            assertThat(s3.getObjectAsBytes(b -> b.bucket("wb-scratch").key(key)).asUtf8String()).isEqualTo("only local");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "s3"})
    void listObjectVersions_answersEachObjectAsItsOnlyVersion_pageByPage(String mode, @TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            List<String> keys = List.of("v/a", "v/b", "v/c", "v/d/1", "v/d/2", "v/e");
            for (String k : keys) {
                s3.putObject(b -> b.bucket("data").key(k), RequestBody.fromString(k));
            }
            s3.putObject(b -> b.bucket("data").key("w/other"), RequestBody.fromString("w"));

            List<ObjectVersion> seen = new ArrayList<>();
            String keyMarker = null;
            String versionMarker = null;
            int pages = 0;
            while (true) {
                String km = keyMarker;
                String vm = versionMarker;
                ListObjectVersionsResponse page = s3.listObjectVersions(b -> b.bucket("data").prefix("v/").maxKeys(4).keyMarker(km)
                        .versionIdMarker(vm));
                pages++;
                assertThat(page.versions().size()).isLessThanOrEqualTo(4);
                seen.addAll(page.versions());
                if (!page.isTruncated()) {
                    break;
                }
                keyMarker = page.nextKeyMarker();
                versionMarker = page.nextVersionIdMarker();
                assertThat(versionMarker).isEqualTo("null");
            }
            assertThat(pages).isEqualTo(2);
            assertThat(seen).extracting(ObjectVersion::key).containsExactlyElementsOf(keys);
            assertThat(seen).allSatisfy(v -> {
                assertThat(v.versionId()).isEqualTo("null");
                assertThat(v.isLatest()).isTrue();
                assertThat(v.size()).isEqualTo(v.key().length());
                assertThat(v.eTag()).isNotBlank();
            });
            assertThat(s3.listObjectVersionsPaginator(b -> b.bucket("data").maxKeys(1)).versions().stream().map(ObjectVersion::key).toList())
                    .as("the SDK's paginator follows the markers").containsExactly("v/a", "v/b", "v/c", "v/d/1", "v/d/2", "v/e", "w/other");

            ListObjectVersionsResponse grouped = s3.listObjectVersions(b -> b.bucket("data").prefix("v/").delimiter("/"));
            assertThat(grouped.versions()).extracting(ObjectVersion::key).containsExactly("v/a", "v/b", "v/c", "v/e");
            assertThat(grouped.commonPrefixes()).extracting(p -> p.prefix()).containsExactly("v/d/");
            ListObjectVersionsResponse after = s3.listObjectVersions(b -> b.bucket("data").prefix("v/").keyMarker("v/c"));
            assertThat(after.versions()).extracting(ObjectVersion::key).containsExactly("v/d/1", "v/d/2", "v/e");

            assertThatThrownBy(() -> s3.listObjectVersions(b -> b.bucket("data").versionIdMarker("null"))).satisfies(e -> {
                assertThat(s3Error(e).statusCode()).isEqualTo(400);
                assertThat(s3Error(e).awsErrorDetails().errorMessage()).contains("needs a key-marker");
            });

            // the version it names is the object: read it, and clean up as tools do (DeleteObjects with each VersionId)
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("v/a").versionId("null")).asUtf8String()).isEqualTo("v/a");
            var deleted = s3.deleteObjects(b -> b.bucket("data").delete(d -> d.objects(seen.stream()
                    .map(v -> software.amazon.awssdk.services.s3.model.ObjectIdentifier.builder().key(v.key()).versionId(v.versionId()).build())
                    .toList())));
            assertThat(deleted.errors()).isEmpty();
            s3.deleteObject(b -> b.bucket("data").key("w/other").versionId("null"));
            assertThat(s3.listObjectVersions(b -> b.bucket("data")).versions()).isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "s3"})
    void listBuckets_reportsWhenEachBucketWasCreated(String mode, @TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            Instant before = Instant.now().minus(Duration.ofMinutes(2));
            s3.createBucket(b -> b.bucket("fresh"));
            Bucket fresh = s3.listBuckets().buckets().stream().filter(b -> b.name().equals("fresh")).findFirst().orElseThrow();
            assertThat(fresh.creationDate()).isBetween(before, Instant.now().plus(Duration.ofMinutes(2)));
        }
    }

    /** The store's error code reaches the client as the store said it: a missing upload is NoSuchUpload, not NoSuchKey. */
    @Test
    void upstreamErrorCodes_arePassedOnUnchanged(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            assertThatThrownBy(() -> s3.abortMultipartUpload(b -> b.bucket("data").key("k").uploadId("no-such-upload")))
                    .satisfies(e -> {
                        assertThat(s3Error(e).statusCode()).isEqualTo(404);
                        assertThat(s3Error(e).awsErrorDetails().errorCode()).isEqualTo("NoSuchUpload");
                    });
            assertThatThrownBy(() -> s3.completeMultipartUpload(b -> b.bucket("data").key("k").uploadId("no-such-upload")
                    .multipartUpload(m -> m.parts(p -> p.partNumber(1).eTag("\"x\""))))).satisfies(e -> {
                        assertThat(s3Error(e).statusCode()).isEqualTo(404);
                        assertThat(s3Error(e).awsErrorDetails().errorCode()).isEqualTo("NoSuchUpload");
                    });
        }
    }
}
