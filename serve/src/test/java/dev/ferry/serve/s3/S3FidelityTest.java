package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.RawHttp;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * What the AWS SDK for Java v2 sees of S3's finer points: empty objects, ranges past the end, keys of
 * spaces in DeleteObjects, versionId refused (never acted on), a part's read (partNumber), response-* overrides,
 * date conditions on reads, and one status (501) for what ferry does not implement.
 */
class S3FidelityTest {
    @TempDir
    static Path dir;
    static DaemonFixture ferry;
    static S3Client s3;

    @BeforeAll
    static void start() throws Exception {
        ferry = DaemonFixture.overFolder(dir).start();
        s3 = ferry.sdk("any", "thing");
    }

    @AfterAll
    static void stop() {
        s3.close();
        ferry.close();
    }

    private static int status(Throwable t) {
        return ((S3Exception) t).statusCode();
    }

    private static String code(Throwable t) {
        return ((S3Exception) t).awsErrorDetails().errorCode();
    }

    @Test
    void put_ofAnEmptyBody_storesAnEmptyObject() throws Exception {
        s3.putObject(b -> b.bucket("data").key("empty"), RequestBody.empty());
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("empty")).asByteArray()).isEmpty();
        assertThat(s3.headObject(b -> b.bucket("data").key("empty")).contentLength()).isZero();
        RawHttp.Answer raw = RawHttp.exchange(ferry.daemon.port(),
                "PUT /data/empty-raw HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        assertThat(raw.status()).as(raw.body()).isEqualTo(200);
        assertThat(Files.size(ferry.root.resolve("data/empty-raw"))).isZero();
    }

    @Test
    void get_withARangeStartingAtOrPastTheEnd_isInvalidRange() {
        s3.putObject(b -> b.bucket("data").key("ten"), RequestBody.fromString("0123456789"));
        for (String range : List.of("bytes=10-", "bytes=11-", "bytes=10-20")) {
            assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("ten").range(range)))
                    .as(range).satisfies(e -> {
                        assertThat(status(e)).isEqualTo(416);
                        assertThat(code(e)).isEqualTo("InvalidRange");
                    });
        }
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("ten").range("bytes=9-")).asUtf8String()).isEqualTo("9");
    }

    @Test
    void deleteObjects_keepsSpacesInKeys() {
        for (String k : List.of("_", "_ ", " ", " lead")) {
            s3.putObject(b -> b.bucket("data").key("sp/" + k), RequestBody.fromString(k));
        }
        s3.putObject(b -> b.bucket("data").key(" "), RequestBody.fromString("one space"));
        var r = s3.deleteObjects(b -> b.bucket("data").delete(d -> d.objects(o -> o.key("sp/_ "), o -> o.key("sp/ "), o -> o.key(" "))));
        assertThat(r.errors()).isEmpty();
        assertThat(r.deleted()).extracting(x -> x.key()).containsExactlyInAnyOrder("sp/_ ", "sp/ ", " ");
        assertThat(s3.listObjectsV2(b -> b.bucket("data").prefix("sp/")).contents()).extracting(S3Object::key)
                .containsExactlyInAnyOrder("sp/_", "sp/ lead");
        assertThat(Files.exists(ferry.root.resolve("data/ "))).isFalse();
    }

    @Test
    void versionId_isRefusedAndNothingIsDone() {
        s3.putObject(b -> b.bucket("data").key("versioned"), RequestBody.fromString("current"));
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("versioned").versionId("v1")))
                .satisfies(e -> assertThat(status(e)).isEqualTo(501)).satisfies(e -> assertThat(code(e)).isEqualTo("NotImplemented"));
        assertThatThrownBy(() -> s3.headObject(b -> b.bucket("data").key("versioned").versionId("v1")))
                .satisfies(e -> assertThat(status(e)).isEqualTo(501));
        assertThatThrownBy(() -> s3.deleteObject(b -> b.bucket("data").key("versioned").versionId("v1")))
                .satisfies(e -> assertThat(status(e)).isEqualTo(501));
        var r = s3.deleteObjects(b -> b.bucket("data").delete(d -> d.objects(o -> o.key("versioned").versionId("v1"))));
        assertThat(r.deleted()).isEmpty();
        assertThat(r.errors()).extracting(e -> e.code()).containsExactly("NotImplemented");
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("versioned")).asUtf8String()).as("still there").isEqualTo("current");
    }

    @Test
    void partNumber_readsThatPart_andPartOneOfAnObjectPutWholeIsAllOfIt() {
        s3.putObject(b -> b.bucket("data").key("whole"), RequestBody.fromString("whole"));
        ResponseBytes<GetObjectResponse> first = s3.getObjectAsBytes(b -> b.bucket("data").key("whole").partNumber(1));
        assertThat(first.asUtf8String()).isEqualTo("whole");
        assertThat(first.response().partsCount()).isNull();
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("whole").partNumber(2)))
                .satisfies(e -> assertThat(status(e)).isEqualTo(400)).satisfies(e -> assertThat(code(e)).isEqualTo("InvalidPart"));

        byte[][] parts = {new byte[5 << 20], new byte[5 << 20], "tail".getBytes(StandardCharsets.UTF_8)};
        java.util.Arrays.fill(parts[0], (byte) 'a');
        java.util.Arrays.fill(parts[1], (byte) 'b');
        String id = s3.createMultipartUpload(b -> b.bucket("data").key("parts")).uploadId();
        List<software.amazon.awssdk.services.s3.model.CompletedPart> done = new java.util.ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            int n = i + 1;
            String etag = s3.uploadPart(b -> b.bucket("data").key("parts").uploadId(id).partNumber(n), RequestBody.fromBytes(parts[n - 1])).eTag();
            done.add(software.amazon.awssdk.services.s3.model.CompletedPart.builder().partNumber(n).eTag(etag).build());
        }
        s3.completeMultipartUpload(b -> b.bucket("data").key("parts").uploadId(id).multipartUpload(m -> m.parts(done)));
        for (int n = 1; n <= parts.length; n++) {
            int part = n;
            ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket("data").key("parts").partNumber(part));
            assertThat(got.asByteArray()).as("part %d", part).isEqualTo(parts[part - 1]);
            assertThat(got.response().partsCount()).isEqualTo(3);
            assertThat(s3.headObject(b -> b.bucket("data").key("parts").partNumber(part)).contentLength()).isEqualTo(parts[part - 1].length);
        }
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("parts").partNumber(4)))
                .satisfies(e -> assertThat(status(e)).isEqualTo(400)).satisfies(e -> assertThat(code(e)).isEqualTo("InvalidPart"));
    }

    @Test
    void get_withResponseOverrides_setsThoseHeaders() {
        s3.putObject(b -> b.bucket("data").key("report.csv"), RequestBody.fromString("a,b\n"));
        Instant expires = Instant.parse("2030-01-02T03:04:05Z");
        ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket("data").key("report.csv")
                .responseContentType("text/csv").responseContentDisposition("attachment; filename=\"report.csv\"")
                .responseCacheControl("no-cache").responseContentEncoding("identity").responseContentLanguage("en")
                .responseExpires(expires));
        GetObjectResponse res = got.response();
        assertThat(got.asUtf8String()).isEqualTo("a,b\n");
        assertThat(res.contentType()).isEqualTo("text/csv");
        assertThat(res.contentDisposition()).isEqualTo("attachment; filename=\"report.csv\"");
        assertThat(res.cacheControl()).isEqualTo("no-cache");
        assertThat(res.contentEncoding()).isEqualTo("identity");
        assertThat(res.contentLanguage()).isEqualTo("en");
        assertThat(res.expires()).isEqualTo(expires);
    }

    @Test
    void get_withDateConditions_answers304Or412() {
        s3.putObject(b -> b.bucket("data").key("dated"), RequestBody.fromString("v1"));
        Instant modified = s3.headObject(b -> b.bucket("data").key("dated")).lastModified();
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("dated").ifModifiedSince(modified)))
                .satisfies(e -> assertThat(status(e)).isEqualTo(304));
        assertThatThrownBy(() -> s3.headObject(b -> b.bucket("data").key("dated").ifModifiedSince(modified.plusSeconds(3600))))
                .satisfies(e -> assertThat(status(e)).isEqualTo(304));
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("dated").ifModifiedSince(modified.minusSeconds(3600))).asUtf8String())
                .isEqualTo("v1");
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("dated").ifUnmodifiedSince(modified.minusSeconds(3600))))
                .satisfies(e -> assertThat(status(e)).isEqualTo(412));
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("dated").ifUnmodifiedSince(modified)).asUtf8String()).isEqualTo("v1");
        // an ETag condition that holds overrides its date counterpart (RFC 9110, as S3)
        String etag = s3.headObject(b -> b.bucket("data").key("dated")).eTag();
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("dated").ifMatch(etag).ifUnmodifiedSince(modified.minusSeconds(3600)))
                .asUtf8String()).isEqualTo("v1");
    }

    @Test
    void unsupportedOperations_are501NotImplemented_andNotRetried() {
        s3.putObject(b -> b.bucket("data").key("tagged"), RequestBody.fromString("x"));
        long before = ferry.stats().requests();
        assertThatThrownBy(() -> s3.getObjectTagging(b -> b.bucket("data").key("tagged")))
                .satisfies(e -> assertThat(status(e)).isEqualTo(501)).satisfies(e -> assertThat(code(e)).isEqualTo("NotImplemented"));
        assertThat(ferry.stats().requests() - before).as("the SDK does not retry a 501").isEqualTo(1);
        assertThatThrownBy(() -> s3.putBucketVersioning(b -> b.bucket("data").versioningConfiguration(v -> v.status("Enabled"))))
                .satisfies(e -> assertThat(status(e)).isEqualTo(501));
        assertThat(ferry.stats().serverErrors()).as("a 501 is no fault of the daemon").isZero();
    }

    /** What a folder store cannot hold, as docs/daemon.md states it: a 400 InvalidRequest with one sentence, nothing stored. */
    @Test
    void folderStore_keysAFileSystemCannotHold_are400InvalidRequest() {
        s3.putObject(b -> b.bucket("data").key("fs/a/b"), RequestBody.fromString("object a/b"));
        for (String key : List.of("fs/a/b/c", "fs/a", "fs/trailing/")) {
            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("data").key(key), RequestBody.fromString("x"))).as(key).satisfies(e -> {
                assertThat(status(e)).isEqualTo(400);
                assertThat(code(e)).isEqualTo("InvalidRequest");
                assertThat(((S3Exception) e).awsErrorDetails().errorMessage()).startsWith("key cannot be stored in a file system store");
            });
        }
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("fs/a/b")).asUtf8String()).isEqualTo("object a/b");
    }
}
