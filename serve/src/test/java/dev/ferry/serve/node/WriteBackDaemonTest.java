package dev.ferry.serve.node;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonFixture;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;

/**
 * {@code ferry serve --write-back}: PUTs and multipart uploads are acknowledged once local ({@code
 * x-ferry-durability: local}), read back from the local copy, and durable in the store after the fence.
 */
class WriteBackDaemonTest {
    @Test
    void putsAndMultipartUploadsAreLocalThenDurable(@TempDir Path dir) throws Exception {
        byte[] small = new byte[100_000];
        byte[] big = new byte[12 << 20];
        new Random(1).nextBytes(small);
        new Random(2).nextBytes(big);
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("write-back", "true").start(); S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            PutObjectResponse put = s3.putObject(b -> b.bucket("data").key("ckpt/small.pt"), RequestBody.fromBytes(small));
            assertThat(put.sdkHttpResponse().firstMatchingHeader("x-ferry-durability")).hasValue("local");

            String id = s3.createMultipartUpload(b -> b.bucket("data").key("ckpt/big.pt")).uploadId();
            assertThat(id).startsWith("ferry-wb-");
            List<CompletedPart> parts = new ArrayList<>();
            for (int p = 0; p * (5 << 20) < big.length; p++) {
                int part = p + 1;
                byte[] slice = java.util.Arrays.copyOfRange(big, p * (5 << 20), Math.min(big.length, (p + 1) * (5 << 20)));
                String etag = s3.uploadPart(b -> b.bucket("data").key("ckpt/big.pt").uploadId(id).partNumber(part),
                        RequestBody.fromBytes(slice)).eTag();
                parts.add(CompletedPart.builder().partNumber(part).eTag(etag).build());
            }
            CompleteMultipartUploadResponse done = s3.completeMultipartUpload(b -> b.bucket("data").key("ckpt/big.pt").uploadId(id)
                    .multipartUpload(m -> m.parts(parts)));
            assertThat(done.sdkHttpResponse().firstMatchingHeader("x-ferry-durability")).hasValue("local");
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("ckpt/big.pt")).asByteArray()).as("read your writes").isEqualTo(big);

            String aborted = s3.createMultipartUpload(b -> b.bucket("data").key("ckpt/never.pt")).uploadId();
            s3.uploadPart(b -> b.bucket("data").key("ckpt/never.pt").uploadId(aborted).partNumber(1), RequestBody.fromBytes(small));
            s3.abortMultipartUpload(b -> b.bucket("data").key("ckpt/never.pt").uploadId(aborted));

            HttpResponse<String> fence = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=60000"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(fence.statusCode()).as(fence.body()).isEqualTo(200);
            assertThat(Files.readAllBytes(ferry.root.resolve("data/ckpt/small.pt"))).isEqualTo(small);
            assertThat(Files.readAllBytes(ferry.root.resolve("data/ckpt/big.pt"))).isEqualTo(big);
            assertThat(Files.exists(ferry.root.resolve("data/ckpt/never.pt"))).isFalse();
            PutObjectResponse through = s3.putObject(b -> b.bucket("data").key("ckpt/now.pt")
                    .overrideConfiguration(o -> o.putHeader("x-ferry-write", "through")), RequestBody.fromBytes(small));
            assertThat(through.sdkHttpResponse().firstMatchingHeader("x-ferry-durability")).hasValue("durable");
            assertThat(Files.readAllBytes(ferry.root.resolve("data/ckpt/now.pt"))).isEqualTo(small);
        }
    }
}
