package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.DaemonFixture;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Conditional writes through the AWS SDK for Java v2, in each mode: {@code If-None-Match: *} creates a key
 * only when it does not exist, {@code If-Match} overwrites only the version named, on PUT and on
 * CompleteMultipartUpload; and the check and the write are one step for writers through the daemon, so of
 * many racing creators exactly one wins.
 */
class ConditionalWriteTest {
    private static int status(Throwable t) {
        return ((S3Exception) t).statusCode();
    }

    /**
     * The key's ETag once every write is durable (under write-back the ETag a PUT answers is already the one
     * the store will report; the fence checks each write reached it).
     */
    private static String etag(DaemonFixture ferry, S3Client s3, String key) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> flush = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=30000"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(flush.statusCode()).as(flush.body()).isEqualTo(200);
        }
        return s3.headObject(b -> b.bucket("data").key(key)).eTag();
    }

    private static String read(S3Client s3, String key) {
        return s3.getObjectAsBytes(b -> b.bucket("data").key(key)).asUtf8String();
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void put_ifNoneMatchAndIfMatch_writeOnlyWhenTheyHold(String mode, @TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            s3.putObject(b -> b.bucket("data").key("lock").ifNoneMatch("*"), RequestBody.fromString("v1"));
            String first = etag(ferry, s3, "lock");
            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("data").key("lock").ifNoneMatch("*"), RequestBody.fromString("v2")))
                    .satisfies(e -> assertThat(status(e)).isEqualTo(412));
            assertThat(read(s3, "lock")).isEqualTo("v1");

            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("data").key("lock").ifMatch("\"not-the-etag\""),
                    RequestBody.fromString("v3"))).satisfies(e -> assertThat(status(e)).isEqualTo(412));
            assertThat(read(s3, "lock")).isEqualTo("v1");
            s3.putObject(b -> b.bucket("data").key("lock").ifMatch(first), RequestBody.fromString("v4"));
            assertThat(read(s3, "lock")).isEqualTo("v4");
            String second = etag(ferry, s3, "lock");
            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("data").key("lock").ifMatch(first), RequestBody.fromString("v5")))
                    .as("the ETag of the version overwritten no longer matches").satisfies(e -> assertThat(status(e)).isEqualTo(412));
            assertThat(second).isNotEqualTo(first);

            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("data").key("absent").ifMatch(first), RequestBody.fromString("x")))
                    .as("If-Match on a key that does not exist: 404, as S3").satisfies(e -> assertThat(status(e)).isEqualTo(404));
            assertThatThrownBy(() -> s3.headObject(b -> b.bucket("data").key("absent")))
                    .satisfies(e -> assertThat(status(e)).isEqualTo(404));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void completeMultipart_ifNoneMatch_refusesAnExistingKey(String mode, @TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            s3.putObject(b -> b.bucket("data").key("ckpt"), RequestBody.fromString("old"));
            String etag = etag(ferry, s3, "ckpt");
            String id = s3.createMultipartUpload(b -> b.bucket("data").key("ckpt")).uploadId();
            String part = s3.uploadPart(b -> b.bucket("data").key("ckpt").uploadId(id).partNumber(1), RequestBody.fromString("new"))
                    .eTag();
            List<CompletedPart> parts = List.of(CompletedPart.builder().partNumber(1).eTag(part).build());
            assertThatThrownBy(() -> s3.completeMultipartUpload(b -> b.bucket("data").key("ckpt").uploadId(id).ifNoneMatch("*")
                    .multipartUpload(m -> m.parts(parts)))).satisfies(e -> assertThat(status(e)).isEqualTo(412));
            assertThat(read(s3, "ckpt")).isEqualTo("old");
            assertThatThrownBy(() -> s3.completeMultipartUpload(b -> b.bucket("data").key("ckpt").uploadId(id).ifMatch("\"other\"")
                    .multipartUpload(m -> m.parts(parts)))).satisfies(e -> assertThat(status(e)).isEqualTo(412));
            assertThat(read(s3, "ckpt")).isEqualTo("old");
            s3.completeMultipartUpload(b -> b.bucket("data").key("ckpt").uploadId(id).ifMatch(etag).multipartUpload(m -> m.parts(parts)));
            assertThat(read(s3, "ckpt")).isEqualTo("new");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back"})
    void put_ifNoneMatch_ofManyRacingWriters_exactlyOneWins(String mode, @TempDir Path dir) throws Exception {
        int writers = 16;
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b");
                ExecutorService pool = Executors.newFixedThreadPool(writers)) {
            for (int round = 0; round < 5; round++) {
                String key = "race-" + round;
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Integer>> outcomes = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    String body = "writer " + w + " " + "x".repeat(256 * 1024);
                    outcomes.add(pool.submit(() -> {
                        go.await();
                        try {
                            s3.putObject(b -> b.bucket("data").key(key).ifNoneMatch("*"), RequestBody.fromString(body));
                            return 200;
                        } catch (S3Exception e) {
                            return e.statusCode();
                        }
                    }));
                }
                go.countDown();
                List<Integer> statuses = new ArrayList<>();
                for (Future<Integer> f : outcomes) {
                    statuses.add(f.get());
                }
                assertThat(statuses).as(key).containsOnly(200, 412).filteredOn(s -> s == 200).hasSize(1);
            }
        }
    }
}
