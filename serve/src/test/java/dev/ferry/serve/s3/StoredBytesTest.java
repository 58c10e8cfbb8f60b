package dev.ferry.serve.s3;

import static dev.ferry.serve.ApiHttp.JSON;
import static dev.ferry.serve.ApiHttp.getOk;
import static dev.ferry.serve.ApiHttp.post;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.RawHttp;
import dev.ferry.serve.StoreCredentials;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Issue 20, item 4: write-back never calls durable what the store changed, and no GET promises a length its
 * bytes do not have. The upstreams are real S3 servers that keep something else than they were sent: s3proxy's
 * file-system backend (the embedded store, reached as a plain {@code --upstream}, so the daemon does not know
 * it) keeps a key ending in '/' as an empty folder, and an {@link AlteringRelay} in front of it changes bytes
 * of PUT bodies on the wire. Clients: the AWS SDK for Java v2 and raw sockets.
 */
@ExtendWith(StoreCredentials.class)
class StoredBytesTest {
    /** Starts with a byte no request ends with, so the relay never holds the last bytes of one. */
    private static final String ORIGINAL = "\u0001ferry-original-bytes";
    private static final String CHANGED = "\u0001ferry-CHANGED!-bytes";

    private static DaemonFixture daemon(Path dir, URI upstream, boolean writeBack) throws Exception {
        return DaemonFixture.overUpstream(upstream, dir).with("cache-size", "64MiB").with("write-back", writeBack).start();
    }

    /**
     * A client that sends no checksum: one it sent is kept with the object and travels with the upload, and the
     * store, checking it, refuses bytes changed on the way (400 BadDigest) before anything is kept; these tests
     * are of a store that keeps what it was not sent, which only ferry's own read-back can catch.
     */
    private static S3Client sdk(URI endpoint) {
        return S3Client.builder().endpointOverride(endpoint).forcePathStyle(true).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("ferry", "ferry")))
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .httpClientBuilder(ApacheHttpClient.builder()).build();
    }

    /** A GET on a raw socket: the answer's Content-Length and the bytes that actually came. */
    private static RawHttp.Answer rawGet(DaemonFixture ferry, String path) throws Exception {
        return RawHttp.exchange(ferry.endpoint().getPort(), "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    }

    private static void assertLengthKept(RawHttp.Answer a) {
        assertThat(a.status()).as(a.head()).isEqualTo(200);
        assertThat(Long.parseLong(a.header("Content-Length"))).as("the length promised is the length sent")
                .isEqualTo(a.body().getBytes(StandardCharsets.ISO_8859_1).length);
    }

    @Test
    void writeBack_aKeyTheStoreKeepsAsAnEmptyFolder_isAFailedWrite_neverDurable_andIsReadAsAcknowledged(@TempDir Path dir)
            throws Exception {
        try (EmbeddedStore store = EmbeddedStore.start(dir.resolve("origin"), 0, CloudProfile.none());
                S3Client direct = sdk(store.endpoint());
                DaemonFixture ferry = daemon(dir, store.endpoint(), true);
                S3Client s3 = sdk(ferry.endpoint());
                HttpClient http = HttpClient.newHttpClient()) {
            direct.createBucket(b -> b.bucket("data"));
            var put = s3.putObject(b -> b.bucket("data").key("ckpt/"), RequestBody.fromBytes(new byte[] {'h', 'i'}));
            assertThat(put.sdkHttpResponse().firstMatchingHeader("x-ferry-durability")).hasValue("local");

            HttpResponse<String> fence = post(http, ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=60000"), null);
            assertThat(fence.statusCode()).as(fence.body()).isEqualTo(502);
            JsonNode write = JSON.readTree(fence.body()).path("writes").get(0);
            assertThat(write.path("key").asText()).isEqualTo("ckpt/");
            assertThat(write.path("durability").asText()).isEqualTo("failed");
            assertThat(write.path("error").asText()).contains("holds 0 bytes").contains("not the 2 bytes");
            assertThat(JSON.readTree(fence.body()).path("complete").asBoolean()).isFalse();
            JsonNode wb = getOk(http, ferry.endpoint().resolve("/_ferry/v1/status")).path("write_back");
            assertThat(wb.path("failed").asLong()).isEqualTo(1);
            assertThat(wb.path("first_failure").asText()).contains("ckpt/").contains("holds 0 bytes");
            assertThat(direct.headObject(b -> b.bucket("data").key("ckpt/")).contentLength()).as("what the store kept").isZero();

            // the acknowledged bytes stay on local disk and are what reads and listings get, length and bytes
            RawHttp.Answer get = rawGet(ferry, "/data/ckpt/");
            assertLengthKept(get);
            assertThat(get.body()).isEqualTo("hi");
            assertThat(s3.headObject(b -> b.bucket("data").key("ckpt/")).contentLength()).isEqualTo(2);
            assertThat(s3.listObjectsV2(b -> b.bucket("data")).contents()).extracting(S3Object::key, S3Object::size)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("ckpt/", 2L));

            // a later write of the key that the store keeps as sent replaces the failed one: nothing is owed any more
            s3.putObject(b -> b.bucket("data").key("ckpt/"), RequestBody.empty());
            fence = post(http, ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=60000"), null);
            assertThat(fence.statusCode()).as(fence.body()).isEqualTo(200);
            assertThat(getOk(http, ferry.endpoint().resolve("/_ferry/v1/status")).path("write_back").path("failed").asLong()).isZero();
            get = rawGet(ferry, "/data/ckpt/");
            assertLengthKept(get);
            assertThat(get.body()).isEmpty();
        }
    }

    @Test
    void writeBack_bytesTheStoreChanged_areReadBackAndFound_soTheWriteFails_andReadsGetWhatWasAcknowledged(@TempDir Path dir)
            throws Exception {
        byte[] body = ("weights " + ORIGINAL + " more weights").getBytes(StandardCharsets.ISO_8859_1);
        try (EmbeddedStore store = EmbeddedStore.start(dir.resolve("origin"), 0, CloudProfile.none());
                S3Client direct = sdk(store.endpoint());
                AlteringRelay relay = new AlteringRelay(store.endpoint(), ORIGINAL, CHANGED);
                DaemonFixture ferry = daemon(dir, relay.endpoint(), true);
                S3Client s3 = sdk(ferry.endpoint());
                HttpClient http = HttpClient.newHttpClient()) {
            direct.createBucket(b -> b.bucket("data"));
            s3.putObject(b -> b.bucket("data").key("model.bin"), RequestBody.fromBytes(body));
            s3.putObject(b -> b.bucket("data").key("plain.bin"), RequestBody.fromString("nothing to change here"));

            HttpResponse<String> fence = post(http, ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=60000"), null);
            assertThat(fence.statusCode()).as(fence.body()).isEqualTo(502);
            // the fence lists the writes still pending when it was taken: the failed one always; the plain one
            // unless its upload had already finished (a fast machine), which the store's copy shows below
            JsonNode writes = JSON.readTree(fence.body()).path("writes");
            assertThat(writes).as(fence.body()).isNotEmpty().hasSizeLessThanOrEqualTo(2)
                    .anySatisfy(w -> assertThat(w.path("key").asText()).isEqualTo("model.bin"));
            for (JsonNode w : writes) {
                if (w.path("key").asText().equals("model.bin")) {
                    assertThat(w.path("durability").asText()).isEqualTo("failed");
                    assertThat(w.path("error").asText()).contains("other bytes").contains("read back");
                } else {
                    assertThat(w.path("durability").asText()).as("a write the store kept as sent").isEqualTo("durable");
                }
            }
            assertThat(direct.getObjectAsBytes(b -> b.bucket("data").key("plain.bin")).asUtf8String())
                    .as("the write the store kept as sent is durable").isEqualTo("nothing to change here");
            String stored = new String(direct.getObjectAsBytes(b -> b.bucket("data").key("model.bin")).asByteArray(), StandardCharsets.ISO_8859_1);
            assertThat(stored).as("the store really changed it").contains("CHANGED");

            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("model.bin")).asByteArray()).isEqualTo(body);
            RawHttp.Answer get = rawGet(ferry, "/data/model.bin");
            assertLengthKept(get);
            assertThat(get.body()).contains(ORIGINAL);
        }
    }

    @Test
    void writeThrough_aStoreThatKeptSomethingElse_failsThePut_andReadsPromiseOnlyTheLengthTheySend(@TempDir Path dir) throws Exception {
        byte[] body = ("weights " + ORIGINAL + " more weights").getBytes(StandardCharsets.ISO_8859_1);
        try (EmbeddedStore store = EmbeddedStore.start(dir.resolve("origin"), 0, CloudProfile.none());
                S3Client direct = sdk(store.endpoint());
                AlteringRelay relay = new AlteringRelay(store.endpoint(), ORIGINAL, CHANGED);
                DaemonFixture ferry = daemon(dir, relay.endpoint(), false);
                S3Client s3 = S3Client.builder().endpointOverride(ferry.endpoint()).forcePathStyle(true).region(Region.US_EAST_1)
                        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("ferry", "ferry")))
                        .overrideConfiguration(o -> o.retryStrategy(software.amazon.awssdk.retries.DefaultRetryStrategy.doNotRetry()))
                        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED) // see sdk()
                        .httpClientBuilder(ApacheHttpClient.builder()).build()) {
            direct.createBucket(b -> b.bucket("data"));
            S3Exception folder = org.junit.jupiter.api.Assertions.assertThrows(S3Exception.class,
                    () -> s3.putObject(b -> b.bucket("data").key("dir/"), RequestBody.fromString("hi")));
            assertThat(folder.statusCode()).isEqualTo(502);
            assertThat(folder.awsErrorDetails().errorMessage()).contains("holds 0 bytes");
            S3Exception changed = org.junit.jupiter.api.Assertions.assertThrows(S3Exception.class,
                    () -> s3.putObject(b -> b.bucket("data").key("model.bin"), RequestBody.fromBytes(body)));
            assertThat(changed.statusCode()).isEqualTo(502);
            assertThat(changed.awsErrorDetails().errorMessage()).contains("other bytes");

            // the failed writes taught the cache nothing: reads tell what the store holds, with its length
            RawHttp.Answer get = rawGet(ferry, "/data/dir/");
            assertLengthKept(get);
            assertThat(get.body()).isEmpty();
            get = rawGet(ferry, "/data/model.bin");
            assertLengthKept(get);
            assertThat(get.body()).contains("CHANGED");
            assertThat(s3.headObject(b -> b.bucket("data").key("dir/")).contentLength()).isZero();

            s3.putObject(b -> b.bucket("data").key("plain.bin"), RequestBody.fromString("kept as sent"));
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("plain.bin")).asUtf8String()).isEqualTo("kept as sent");
        }
    }

    @Test
    void overTheEmbeddedStore_bytesForAKeyEndingInSlash_areRefusedBeforeAnythingIsWritten_inBothModes(@TempDir Path dir)
            throws Exception {
        for (String writeBack : new String[] {"true", "false"}) {
            try (DaemonFixture ferry = DaemonFixture.overS3(dir.resolve("wb-" + writeBack)).with("write-back", writeBack).start();
                    S3Client s3 = ferry.sdk("a", "b");
                    HttpClient http = HttpClient.newHttpClient()) {
                S3Exception refused = org.junit.jupiter.api.Assertions.assertThrows(S3Exception.class,
                        () -> s3.putObject(b -> b.bucket("data").key("dir/"), RequestBody.fromString("hi")));
                assertThat(refused.statusCode()).isEqualTo(400);
                assertThat(refused.awsErrorDetails().errorCode()).isEqualTo("InvalidRequest");
                assertThat(refused.awsErrorDetails().errorMessage()).contains("keeps a key ending in '/' as a folder");
                assertThat(org.junit.jupiter.api.Assertions.assertThrows(S3Exception.class,
                        () -> s3.createMultipartUpload(b -> b.bucket("data").key("dir/"))).statusCode()).isEqualTo(400);

                s3.putObject(b -> b.bucket("data").key("marker/"), RequestBody.empty()); // a folder marker is taken
                assertThat(post(http, ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=60000"), null).statusCode()).isEqualTo(200);
                RawHttp.Answer get = RawHttp.exchange(ferry.endpoint().getPort(),
                        "GET /data/marker/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                assertLengthKept(get);
                assertThat(s3.listObjectsV2(b -> b.bucket("data")).contents()).extracting(S3Object::key).containsExactly("marker/");
            }
        }
    }
}
