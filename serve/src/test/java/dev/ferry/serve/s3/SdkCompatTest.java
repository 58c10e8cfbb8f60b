package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.DaemonFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/** The AWS SDK for Java v2, unchanged but for the endpoint, against {@code ferry serve}. */
class SdkCompatTest {
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

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void putGetRangeHeadListDelete() {
        byte[] data = random(3_000_000, 1);
        s3.putObject(b -> b.bucket("data").key("dir/a.bin"), RequestBody.fromBytes(data));
        ResponseBytes<GetObjectResponse> whole = s3.getObjectAsBytes(b -> b.bucket("data").key("dir/a.bin"));
        assertThat(whole.asByteArray()).isEqualTo(data);
        ResponseBytes<GetObjectResponse> part = s3.getObjectAsBytes(b -> b.bucket("data").key("dir/a.bin").range("bytes=1048570-1048590"));
        assertThat(part.asByteArray()).isEqualTo(java.util.Arrays.copyOfRange(data, 1048570, 1048591));
        assertThat(part.response().contentRange()).isEqualTo("bytes 1048570-1048590/3000000");
        ResponseBytes<GetObjectResponse> suffix = s3.getObjectAsBytes(b -> b.bucket("data").key("dir/a.bin").range("bytes=-10"));
        assertThat(suffix.asByteArray()).isEqualTo(java.util.Arrays.copyOfRange(data, data.length - 10, data.length));
        HeadObjectResponse head = s3.headObject(b -> b.bucket("data").key("dir/a.bin"));
        assertThat(head.contentLength()).isEqualTo(data.length);
        assertThat(head.eTag()).isEqualTo(whole.response().eTag());
        List<String> keys = s3.listObjectsV2(b -> b.bucket("data").prefix("dir/")).contents().stream().map(S3Object::key).toList();
        assertThat(keys).containsExactly("dir/a.bin");
        s3.deleteObject(b -> b.bucket("data").key("dir/a.bin"));
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("dir/a.bin"))).isInstanceOf(NoSuchKeyException.class);
    }

    @Test
    void aSecondReadIsSentFromTheCacheWithSendfile() {
        byte[] data = random(5_000_000, 2);
        s3.putObject(b -> b.bucket("data").key("hot.bin"), RequestBody.fromBytes(data));
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("hot.bin")).asByteArray()).isEqualTo(data); // miss: streamed
        long before = ferry.stats().zeroCopyBytes();
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("hot.bin")).asByteArray()).isEqualTo(data); // hit
        assertThat(ferry.stats().zeroCopyBytes() - before).isEqualTo(data.length);
        long ranged = ferry.stats().zeroCopyBytes();
        byte[] r = s3.getObjectAsBytes(b -> b.bucket("data").key("hot.bin").range("bytes=1048000-2100000")).asByteArray();
        assertThat(r).isEqualTo(java.util.Arrays.copyOfRange(data, 1048000, 2100001));
        assertThat(ferry.stats().zeroCopyBytes() - ranged).isEqualTo(r.length);
    }

    @Test
    void multipartUpload() {
        String id = s3.createMultipartUpload(b -> b.bucket("data").key("mp.bin")).uploadId();
        List<CompletedPart> parts = new ArrayList<>();
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (int n = 1; n <= 3; n++) {
            byte[] p = random(n < 3 ? 5 << 20 : 1000, 10 + n);
            all.writeBytes(p);
            int part = n;
            String etag = s3.uploadPart(b -> b.bucket("data").key("mp.bin").uploadId(id).partNumber(part), RequestBody.fromBytes(p)).eTag();
            parts.add(CompletedPart.builder().partNumber(n).eTag(etag).build());
        }
        s3.completeMultipartUpload(b -> b.bucket("data").key("mp.bin").uploadId(id)
                .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build()));
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("mp.bin")).asByteArray()).isEqualTo(all.toByteArray());

        String aborted = s3.createMultipartUpload(b -> b.bucket("data").key("gone.bin")).uploadId();
        s3.abortMultipartUpload(b -> b.bucket("data").key("gone.bin").uploadId(aborted));
        assertThatThrownBy(() -> s3.uploadPart(b -> b.bucket("data").key("gone.bin").uploadId(aborted).partNumber(1),
                RequestBody.fromBytes(new byte[10]))).isInstanceOfSatisfying(S3Exception.class,
                        e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("NoSuchUpload"));
    }

    @Test
    void listingPagesWithSmallMaxKeysAndDelimiters() throws Exception {
        for (int i = 0; i < 25; i++) {
            Files.createDirectories(ferry.root.resolve("data/list/d" + (i % 3)));
            Files.writeString(ferry.root.resolve("data/list/d" + (i % 3) + "/k" + String.format("%02d", i)), "x");
        }
        List<String> seen = new ArrayList<>();
        s3.listObjectsV2Paginator(b -> b.bucket("data").prefix("list/").maxKeys(4)).contents().forEach(o -> seen.add(o.key()));
        assertThat(seen).hasSize(25).isSorted().doesNotHaveDuplicates();
        var top = s3.listObjectsV2(b -> b.bucket("data").prefix("list/").delimiter("/"));
        assertThat(top.commonPrefixes()).extracting(p -> p.prefix()).containsExactly("list/d0/", "list/d1/", "list/d2/");
        assertThat(top.contents()).isEmpty();
        var v1 = s3.listObjects(b -> b.bucket("data").prefix("list/d1/").maxKeys(3));
        assertThat(v1.isTruncated()).isTrue();
        var v1next = s3.listObjects(b -> b.bucket("data").prefix("list/d1/").marker(v1.nextMarker()));
        assertThat(v1.contents().size() + v1next.contents().size()).isEqualTo(8);
    }

    @Test
    void conditionalReads() {
        s3.putObject(b -> b.bucket("data").key("cond.txt"), RequestBody.fromString("v1"));
        String etag = s3.headObject(b -> b.bucket("data").key("cond.txt")).eTag();
        assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("cond.txt").ifMatch(etag)).asUtf8String()).isEqualTo("v1");
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("cond.txt").ifMatch("\"nope\"")))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(412));
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("cond.txt").ifNoneMatch(etag)))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(304));
    }

    @Test
    void bucketsAndErrors() {
        s3.createBucket(b -> b.bucket("fresh-bucket"));
        assertThat(s3.listBuckets().buckets()).extracting(x -> x.name()).contains("data", "fresh-bucket");
        s3.headBucket(b -> b.bucket("fresh-bucket"));
        assertThatThrownBy(() -> s3.listObjectsV2(b -> b.bucket("no-such-bucket")))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("NoSuchBucket"));
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("missing").range("bytes=0-1")))
                .isInstanceOf(NoSuchKeyException.class);
        s3.putObject(b -> b.bucket("data").key("tiny"), RequestBody.fromString("abc"));
        assertThatThrownBy(() -> s3.getObject(b -> b.bucket("data").key("tiny").range("bytes=10-20")))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("InvalidRange"));
    }

    @Test
    void deleteObjects() {
        for (String k : List.of("del/1", "del/2", "del/3")) {
            s3.putObject(b -> b.bucket("data").key(k), RequestBody.fromString(k));
        }
        var r = s3.deleteObjects(b -> b.bucket("data").delete(d -> d.objects(o -> o.key("del/1"), o -> o.key("del/2"))));
        assertThat(r.deleted()).extracting(x -> x.key()).containsExactlyInAnyOrder("del/1", "del/2");
        assertThat(s3.listObjectsV2(b -> b.bucket("data").prefix("del/")).contents()).extracting(S3Object::key).containsExactly("del/3");
    }
}
