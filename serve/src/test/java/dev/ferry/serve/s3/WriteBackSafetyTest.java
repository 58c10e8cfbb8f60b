package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.DaemonFixture;
import dev.ferry.time.Await;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Write-back acknowledges only what can be uploaded, with the ETag the store will report, and multipart
 * uploads behave as S3's do: issue 12, through the AWS SDK for Java v2 (and boto3) against a real daemon.
 */
class WriteBackSafetyTest {
    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    static String md5(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(b));
    }

    static String quoted(String etag) {
        return "\"" + etag + "\"";
    }

    static void flush(DaemonFixture ferry) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> fence = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=60000"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(fence.statusCode()).as(fence.body()).isEqualTo(200);
        }
    }

    static int status(Runnable call) {
        try {
            call.run();
            return 200;
        } catch (S3Exception e) {
            return e.statusCode();
        }
    }

    static String code(Runnable call) {
        try {
            call.run();
            return null;
        } catch (S3Exception e) {
            return e.awsErrorDetails().errorCode();
        }
    }

    @Test
    void writeBack_refusesAMissingBucketOrAnUnstorableKey_insteadOfAcknowledgingIt(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("write-back", "true").start(); S3Client s3 = ferry.sdk("a", "b")) {
            assertThat(code(() -> s3.putObject(b -> b.bucket("nobucket").key("k"), RequestBody.fromBytes(new byte[10]))))
                    .isEqualTo("NoSuchBucket");
            assertThat(code(() -> s3.createMultipartUpload(b -> b.bucket("nobucket").key("k")))).isEqualTo("NoSuchBucket");
            s3.putObject(b -> b.bucket("data").key("file"), RequestBody.fromBytes(new byte[10]));
            assertThat(status(() -> s3.putObject(b -> b.bucket("data").key("file/child"), RequestBody.fromBytes(new byte[10]))))
                    .as("a key under an object, which a folder store cannot hold").isEqualTo(400);
            s3.createBucket(b -> b.bucket("later"));
            s3.putObject(b -> b.bucket("later").key("k"), RequestBody.fromBytes(new byte[10])); // created since: taken
            flush(ferry);
            assertThat(ferry.daemon.node().stack().writeBack().stats().failed()).as("nothing acknowledged failed its upload").isZero();
        }
    }

    @Test
    void writeBack_overTheEmbeddedStore_refusesAKeyItCannotHold_beforeAcknowledging_asTheStoreItselfDoes(@TempDir Path dir)
            throws Exception {
        String longSegment = "run/" + "s".repeat(213);
        String longKey = "k".repeat(1024);
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("write-back", "true").start(); S3Client s3 = ferry.sdk("a", "b")) {
            for (String key : new String[] {longSegment, longKey}) {
                assertThat(code(() -> s3.putObject(b -> b.bucket("data").key(key), RequestBody.fromBytes(new byte[10]))))
                        .as("PUT of a key with a segment of " + key.length() + " bytes").isEqualTo("KeyTooLongError");
                assertThat(code(() -> s3.createMultipartUpload(b -> b.bucket("data").key(key)))).isEqualTo("KeyTooLongError");
            }
            // the longest it holds: folders of 255 bytes (a file name's most), a last segment of 212 (s3proxy adds up to 43 to it),
            s3.putObject(b -> b.bucket("data").key("run/" + "f".repeat(255) + "/" + "s".repeat(212)), RequestBody.fromBytes(new byte[10]));
            // and a multipart upload of a key with no folder, 170 (its files are named after all of it)
            assertThat(code(() -> s3.createMultipartUpload(b -> b.bucket("data").key("m".repeat(171))))).isEqualTo("KeyTooLongError");
            String id = s3.createMultipartUpload(b -> b.bucket("data").key("m".repeat(170))).uploadId();
            String etag = s3.uploadPart(b -> b.bucket("data").key("m".repeat(170)).uploadId(id).partNumber(1), RequestBody.fromBytes(new byte[10]))
                    .eTag();
            s3.completeMultipartUpload(b -> b.bucket("data").key("m".repeat(170)).uploadId(id)
                    .multipartUpload(m -> m.parts(CompletedPart.builder().partNumber(1).eTag(etag).build())));
            flush(ferry);
            assertThat(ferry.daemon.node().stack().writeBack().stats().failed()).as("nothing acknowledged failed its upload").isZero();
        }
        // the embedded store itself: S3's code, a 400 every client takes as final, not a retryable 500
        try (dev.ferry.embedded.EmbeddedStore store = dev.ferry.embedded.EmbeddedStore.start(dir.resolve("direct"), 0,
                dev.ferry.embedded.CloudProfile.none());
                S3Client direct = DaemonFixture.sdk(store.endpoint(), "a", "b")) {
            direct.createBucket(b -> b.bucket("data"));
            assertThatThrownBy(() -> direct.putObject(b -> b.bucket("data").key(longSegment), RequestBody.fromBytes(new byte[10])))
                    .isInstanceOfSatisfying(S3Exception.class, e -> {
                        assertThat(e.statusCode()).isEqualTo(400);
                        assertThat(e.awsErrorDetails().errorCode()).isEqualTo("KeyTooLongError");
                    });
        }
    }

    @Test
    void writeBack_overS3_refusesAMissingBucket(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("write-back", "true").start(); S3Client s3 = ferry.sdk("a", "b")) {
            assertThat(code(() -> s3.putObject(b -> b.bucket("nobucket").key("k"), RequestBody.fromBytes(new byte[10]))))
                    .isEqualTo("NoSuchBucket");
            s3.putObject(b -> b.bucket("data").key("k"), RequestBody.fromBytes(new byte[10]));
            flush(ferry);
            assertThat(ferry.daemon.node().stack().writeBack().stats().failed()).isZero();
        }
    }

    @Test
    void writeBack_answersTheEtagTheStoreWillReport_andAReadNamingItWorksAfterTheUpload(@TempDir Path dir) throws Exception {
        byte[] small = random(300_000, 1);
        byte[] p1 = random(5 << 20, 2);
        byte[] p2 = random(1 << 20, 3);
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("write-back", "true").start(); S3Client s3 = ferry.sdk("a", "b")) {
            String put = s3.putObject(b -> b.bucket("data").key("ckpt/small"), RequestBody.fromBytes(small)).eTag();
            assertThat(put).isEqualTo(quoted(md5(small)));

            String id = s3.createMultipartUpload(b -> b.bucket("data").key("ckpt/big")).uploadId();
            List<CompletedPart> parts = new ArrayList<>();
            byte[][] bodies = {p1, p2};
            for (int i = 0; i < 2; i++) {
                int n = i + 1;
                byte[] body = bodies[i];
                String etag = s3.uploadPart(b -> b.bucket("data").key("ckpt/big").uploadId(id).partNumber(n), RequestBody.fromBytes(body)).eTag();
                assertThat(etag).isEqualTo(quoted(md5(body)));
                parts.add(CompletedPart.builder().partNumber(n).eTag(etag).build());
            }
            String big = s3.completeMultipartUpload(b -> b.bucket("data").key("ckpt/big").uploadId(id).multipartUpload(m -> m.parts(parts))).eTag();
            MessageDigest both = MessageDigest.getInstance("MD5");
            both.update(MessageDigest.getInstance("MD5").digest(p1));
            both.update(MessageDigest.getInstance("MD5").digest(p2));
            assertThat(big).isEqualTo(quoted(HexFormat.of().formatHex(both.digest()) + "-2"));

            flush(ferry); // uploaded: the ETags the clients hold must still name the objects
            assertThat(s3.headObject(b -> b.bucket("data").key("ckpt/small")).eTag()).isEqualTo(put);
            assertThat(s3.headObject(b -> b.bucket("data").key("ckpt/big")).eTag()).isEqualTo(big);
            byte[] range = s3.getObjectAsBytes(b -> b.bucket("data").key("ckpt/big").range("bytes=5242870-5242889").ifMatch(big)).asByteArray();
            byte[] whole = new byte[p1.length + p2.length];
            System.arraycopy(p1, 0, whole, 0, p1.length);
            System.arraycopy(p2, 0, whole, p1.length, p2.length);
            assertThat(range).isEqualTo(Arrays.copyOfRange(whole, 5242870, 5242890));
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("ckpt/small").range("bytes=0-9").ifMatch(put)).asByteArray())
                    .isEqualTo(Arrays.copyOf(small, 10));
            assertThat(Files.readAllBytes(ferry.root.resolve("data/ckpt/big"))).isEqualTo(whole);
        }
    }

    @Test
    void writeBack_overS3_theEtagHoldsAfterTheUpload(@TempDir Path dir) throws Exception {
        byte[] small = random(200_000, 4);
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("write-back", "true").start(); S3Client s3 = ferry.sdk("a", "b")) {
            String put = s3.putObject(b -> b.bucket("data").key("k"), RequestBody.fromBytes(small)).eTag();
            assertThat(put).isEqualTo(quoted(md5(small)));
            flush(ferry);
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("k").range("bytes=0-99").ifMatch(put)).asByteArray())
                    .isEqualTo(Arrays.copyOf(small, 100));
        }
    }

    @Test
    void boto3_downloadsAWriteBackObject_byTheEtagItWasAnswered(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(new ProcessBuilder("python3", "-c", "import boto3").start().waitFor() == 0, "python3 with boto3");
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("write-back", "true").start()) {
            Path script = dir.resolve("download.py");
            Files.writeString(script, """
                    import sys, boto3, hashlib
                    from boto3.s3.transfer import TransferConfig
                    s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id="a", aws_secret_access_key="b", region_name="us-east-1")
                    data = bytes(range(256)) * (48 * 4096)  # 12 MiB
                    etag = s3.put_object(Bucket="data", Key="obj", Body=data)["ETag"]
                    assert etag == '"%s"' % hashlib.md5(data).hexdigest(), etag
                    # chunked download: boto3 names the ETag of its first answer (If-Match) on every later range
                    cfg = TransferConfig(multipart_threshold=1 << 20, multipart_chunksize=1 << 20, max_concurrency=2)
                    s3.download_file("data", "obj", sys.argv[2], Config=cfg)
                    assert open(sys.argv[2], "rb").read() == data
                    print("boto3 ok")
                    """);
            Process p = new ProcessBuilder("python3", script.toString(), ferry.endpoint().toString(), dir.resolve("out").toString())
                    .redirectErrorStream(true).start();
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
            String out = new String(p.getInputStream().readAllBytes());
            assertThat(p.exitValue()).as(out).isZero();
            assertThat(out).contains("boto3 ok");
        }
    }

    @Test
    void multipart_retriedCompleteAnswersTheSameEtag_smallPartsAreEntityTooSmall(@TempDir Path dir) throws Exception {
        for (String writeBack : List.of("true", "false")) {
            Path d = Files.createDirectories(dir.resolve("wb-" + writeBack));
            try (DaemonFixture ferry = DaemonFixture.overFolder(d).with("write-back", writeBack).start(); S3Client s3 = ferry.sdk("a", "b")) {
                String id = s3.createMultipartUpload(b -> b.bucket("data").key("m")).uploadId();
                String e1 = s3.uploadPart(b -> b.bucket("data").key("m").uploadId(id).partNumber(1), RequestBody.fromBytes(random(1000, 5))).eTag();
                String e2 = s3.uploadPart(b -> b.bucket("data").key("m").uploadId(id).partNumber(2), RequestBody.fromBytes(random(1000, 6))).eTag();
                List<CompletedPart> small = List.of(CompletedPart.builder().partNumber(1).eTag(e1).build(),
                        CompletedPart.builder().partNumber(2).eTag(e2).build());
                assertThat(code(() -> s3.completeMultipartUpload(b -> b.bucket("data").key("m").uploadId(id).multipartUpload(m -> m.parts(small)))))
                        .as("write-back " + writeBack).isEqualTo("EntityTooSmall");
                String e3 = s3.uploadPart(b -> b.bucket("data").key("m").uploadId(id).partNumber(1), RequestBody.fromBytes(random(5 << 20, 7))).eTag();
                List<CompletedPart> parts = List.of(CompletedPart.builder().partNumber(1).eTag(e3).build(),
                        CompletedPart.builder().partNumber(2).eTag(e2).build());
                String first = s3.completeMultipartUpload(b -> b.bucket("data").key("m").uploadId(id).multipartUpload(m -> m.parts(parts))).eTag();
                String again = s3.completeMultipartUpload(b -> b.bucket("data").key("m").uploadId(id).multipartUpload(m -> m.parts(parts))).eTag();
                assertThat(again).as("write-back " + writeBack).isEqualTo(first).endsWith("-2\"");
                assertThat(s3.headObject(b -> b.bucket("data").key("m")).contentLength()).isEqualTo((5 << 20) + 1000);
            }
        }
    }

    @Test
    void unfinishedUploads_areListedByPrefix_andExpireWithTheirParts(@TempDir Path dir) throws Exception {
        for (String writeBack : List.of("true", "false")) {
            Path d = Files.createDirectories(dir.resolve("wb-" + writeBack));
            try (DaemonFixture ferry = DaemonFixture.overFolder(d).with("write-back", writeBack).with("multipart-ttl", "3s").start();
                    S3Client s3 = ferry.sdk("a", "b")) {
                String a = s3.createMultipartUpload(b -> b.bucket("data").key("logs/a")).uploadId();
                String other = s3.createMultipartUpload(b -> b.bucket("data").key("other")).uploadId();
                s3.uploadPart(b -> b.bucket("data").key("logs/a").uploadId(a).partNumber(1), RequestBody.fromBytes(random(100_000, 8)));
                assertThat(s3.listMultipartUploads(b -> b.bucket("data").prefix("logs/")).uploads())
                        .extracting(u -> u.key() + " " + u.uploadId()).containsExactly("logs/a " + a);
                assertThat(s3.listMultipartUploads(b -> b.bucket("data")).uploads()).hasSize(2);
                String done = s3.createMultipartUpload(b -> b.bucket("data").key("done")).uploadId();
                String e = s3.uploadPart(b -> b.bucket("data").key("done").uploadId(done).partNumber(1), RequestBody.fromBytes(random(10, 9))).eTag();
                s3.completeMultipartUpload(b -> b.bucket("data").key("done").uploadId(done)
                        .multipartUpload(m -> m.parts(CompletedPart.builder().partNumber(1).eTag(e).build())));
                assertThat(s3.listMultipartUploads(b -> b.bucket("data")).uploads()).extracting(u -> u.uploadId())
                        .as("completed uploads are not listed").containsExactlyInAnyOrder(a, other);
                Await.until("the uploads expired after multipart-ttl", Duration.ofSeconds(30),
                        () -> s3.listMultipartUploads(b -> b.bucket("data")).uploads().isEmpty());
                assertThat(code(() -> s3.uploadPart(b -> b.bucket("data").key("logs/a").uploadId(a).partNumber(2),
                        RequestBody.fromBytes(new byte[1])))).isEqualTo("NoSuchUpload");
                Path staged = writeBack.equals("true") ? d.resolve("cache-multipart/.ferry-uploads") : ferry.root.resolve(".ferry-uploads");
                // the completed upload's record (kept so that a retried Complete answers 200) expires a TTL after its
                // completion, a moment after the others: wait for it as well
                Await.until("the staged parts deleted", Duration.ofSeconds(30), () -> stagedFiles(staged).isEmpty());
            }
        }
    }

    private static List<Path> stagedFiles(Path staged) throws java.io.IOException {
        if (!Files.exists(staged)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(staged)) {
            return files.filter(Files::isRegularFile).toList();
        }
    }

    @Test
    void objectHeaders_areKept_throughTheFolderStore_writeBack_andS3(@TempDir Path dir) throws Exception {
        for (String mode : List.of("folder", "write-back", "s3", "s3-write-back")) {
            Path d = Files.createDirectories(dir.resolve(mode));
            DaemonFixture.Builder daemon = mode.startsWith("s3") ? DaemonFixture.overS3(d) : DaemonFixture.overFolder(d);
            try (DaemonFixture ferry = daemon.with("write-back", mode.endsWith("write-back")).start();
                    S3Client s3 = ferry.sdk("a", "b")) {
                java.time.Instant expires = java.time.Instant.parse("2030-01-01T00:00:00Z");
                s3.putObject(b -> b.bucket("data").key("page.html").contentType("text/html; charset=utf-8").contentEncoding("gzip")
                        .cacheControl("max-age=60").contentDisposition("attachment; filename=\"p.html\"").expires(expires)
                        .metadata(Map.of("epoch", "7", "run", "abc")), RequestBody.fromBytes("<p>".getBytes()));
                String id = s3.createMultipartUpload(b -> b.bucket("data").key("video").contentType("video/mp4").metadata(Map.of("n", "1"))).uploadId();
                String e = s3.uploadPart(b -> b.bucket("data").key("video").uploadId(id).partNumber(1), RequestBody.fromBytes(random(10, 1))).eTag();
                s3.completeMultipartUpload(b -> b.bucket("data").key("video").uploadId(id)
                        .multipartUpload(m -> m.parts(CompletedPart.builder().partNumber(1).eTag(e).build())));
                for (String when : List.of("before the upload", "after the upload")) {
                    var head = s3.headObject(b -> b.bucket("data").key("page.html"));
                    assertThat(head.contentType()).as(mode + " " + when).isEqualTo("text/html; charset=utf-8");
                    assertThat(head.contentEncoding()).as(mode + " " + when).isEqualTo("gzip");
                    assertThat(head.cacheControl()).isEqualTo("max-age=60");
                    assertThat(head.contentDisposition()).isEqualTo("attachment; filename=\"p.html\"");
                    assertThat(head.expires()).isEqualTo(expires);
                    assertThat(head.metadata()).as(mode + " " + when).containsExactlyInAnyOrderEntriesOf(Map.of("epoch", "7", "run", "abc"));
                    var get = s3.getObject(b -> b.bucket("data").key("video"));
                    get.close();
                    assertThat(get.response().contentType()).as(mode + " " + when).isEqualTo("video/mp4");
                    assertThat(get.response().metadata()).containsEntry("n", "1");
                    flush(ferry);
                }
                assertThat(s3.headObject(b -> b.bucket("data").key("video")).contentType()).isEqualTo("video/mp4");
                s3.putObject(b -> b.bucket("data").key("page.html"), RequestBody.fromBytes("x".getBytes()));
                var plain = s3.headObject(b -> b.bucket("data").key("page.html"));
                assertThat(plain.metadata()).as(mode + ": an overwrite keeps nothing of the old object").isEmpty();
                assertThat(plain.cacheControl()).isNull();
            }
        }
    }
}
