package dev.ferry.serve.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.time.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The daemon's scratch bucket, with the AWS SDK for Java v2 over the embedded S3 store: PUT, GET, HEAD,
 * LIST and DELETE work there against local disk only (the store sees no request, and holds no byte of it),
 * a write past the quota is refused with 507, objects older than the TTL are gone, and the status shows
 * the usage.
 */
class ScratchDaemonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static byte[] random(int n, int seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static JsonNode status(HttpClient http, URI api) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(api.resolve("status")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static long originRequests(JsonNode status) {
        return status.get("tiers").get("origin").get("requests").asLong();
    }

    private static boolean upstreamHoldsAFileNamed(Path dir, String name) throws Exception {
        try (Stream<Path> s = Files.walk(dir.resolve("upstream"))) {
            return s.anyMatch(p -> p.getFileName().toString().contains(name));
        }
    }

    @Test
    void scratchIsServedFromLocalDiskOnly_andHasAQuota(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("scratch-bucket", "scratch").with("scratch-quota", "100000").start();
                S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            long before = originRequests(status(http, api));
            byte[] a = random(60_000, 1);
            s3.createBucket(b -> b.bucket("scratch")); // exists already: answered here
            var put = s3.putObject(b -> b.bucket("scratch").key("spill/a.bin"), RequestBody.fromBytes(a));
            assertThat(put.sdkHttpResponse().firstMatchingHeader("x-ferry-durability")).contains("local");
            assertThat(s3.getObjectAsBytes(b -> b.bucket("scratch").key("spill/a.bin")).asByteArray()).isEqualTo(a);
            assertThat(s3.getObjectAsBytes(b -> b.bucket("scratch").key("spill/a.bin").range("bytes=100-199")).asByteArray())
                    .isEqualTo(Arrays.copyOfRange(a, 100, 200));
            assertThat(s3.headObject(b -> b.bucket("scratch").key("spill/a.bin")).contentLength()).isEqualTo(60_000);
            assertThat(s3.listObjectsV2(b -> b.bucket("scratch").prefix("spill/")).contents()).extracting(o -> o.key())
                    .containsExactly("spill/a.bin");
            assertThat(s3.listBuckets().buckets()).extracting(b -> b.name()).contains("scratch", "data");

            // past the quota: 60,000 + 60,000 > 100,000
            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("scratch").key("spill/b.bin"), RequestBody.fromBytes(random(60_000, 2))))
                    .isInstanceOfSatisfying(S3Exception.class, e -> {
                        assertThat(e.statusCode()).isEqualTo(507);
                        assertThat(e.awsErrorDetails().errorCode()).isEqualTo("InsufficientStorage");
                        assertThat(e.getMessage()).contains("scratch quota of 100000 bytes is full");
                    });
            // a multipart upload is refused with one sentence, not half taken
            assertThatThrownBy(() -> s3.createMultipartUpload(b -> b.bucket("scratch").key("big")))
                    .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(501));

            JsonNode status = status(http, api);
            JsonNode scratch = status.get("scratch");
            assertThat(scratch.get("bucket").asText()).isEqualTo("scratch");
            assertThat(scratch.get("used_bytes").asLong()).isEqualTo(60_000);
            assertThat(scratch.get("objects").asLong()).isEqualTo(1);
            assertThat(scratch.get("quota_bytes").asLong()).isEqualTo(100_000);
            assertThat(scratch.get("refused_writes").asLong()).isEqualTo(1);

            s3.deleteObject(b -> b.bucket("scratch").key("spill/a.bin"));
            assertThatThrownBy(() -> s3.getObject(b -> b.bucket("scratch").key("spill/a.bin"))).isInstanceOf(NoSuchKeyException.class);
            // the room is back
            s3.putObject(b -> b.bucket("scratch").key("spill/b.bin"), RequestBody.fromBytes(random(60_000, 2)));
            assertThat(status(http, api).get("scratch").get("used_bytes").asLong()).isEqualTo(60_000);

            // none of it reached the object store: not one request, not one file
            assertThat(originRequests(status(http, api))).isEqualTo(before);
            assertThat(upstreamHoldsAFileNamed(dir, "a.bin")).isFalse();
            assertThat(upstreamHoldsAFileNamed(dir, "b.bin")).isFalse();
            // while other buckets still go through to it
            s3.putObject(b -> b.bucket("data").key("kept.bin"), RequestBody.fromBytes(random(1000, 3)));
            assertThat(originRequests(status(http, api))).isGreaterThan(before);
            assertThat(upstreamHoldsAFileNamed(dir, "kept.bin")).isTrue();
        }
    }

    @Test
    void scratchObjectsOlderThanTheTtlAreGone(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("scratch-bucket", "tmp-node").with("scratch-quota", "1MiB")
                .with("scratch-ttl", "2s").start();
                S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            s3.putObject(b -> b.bucket("tmp-node").key("x"), RequestBody.fromBytes(random(700_000, 4)));
            assertThat(s3.headObject(b -> b.bucket("tmp-node").key("x")).contentLength()).isEqualTo(700_000);
            // full: a second one does not fit until the first expires
            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("tmp-node").key("y"), RequestBody.fromBytes(random(700_000, 5))))
                    .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(507));
            Path file = dir.resolve("cache-scratch").resolve("tmp-node").resolve("x");
            assertThat(file).exists();
            Await.until("the scratch file swept after its TTL", Duration.ofSeconds(30), () -> !Files.exists(file));
            assertThatThrownBy(() -> s3.headObject(b -> b.bucket("tmp-node").key("x"))).isInstanceOf(S3Exception.class)
                    .satisfies(e -> assertThat(((S3Exception) e).statusCode()).isEqualTo(404));
            assertThat(s3.listObjectsV2(b -> b.bucket("tmp-node")).contents()).isEmpty();
            JsonNode scratch = status(http, api).get("scratch");
            assertThat(scratch.get("used_bytes").asLong()).isZero();
            assertThat(scratch.get("expired").asLong()).isEqualTo(1);
            s3.putObject(b -> b.bucket("tmp-node").key("y"), RequestBody.fromBytes(random(700_000, 5))); // fits now
        }
    }
}
