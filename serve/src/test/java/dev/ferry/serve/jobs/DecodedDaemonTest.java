package dev.ferry.serve.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.serve.DaemonFixture;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The daemon's decoded samples over its real HTTP front (docs/decoded-cache.md): an offered decode is read back with
 * its decode time and listed by a lookup, another version or sample is a miss, an object changed since is never
 * served, the share set by hand is lent from the tier, bad requests get one sentence, and a daemon with
 * {@code --decoded off} answers 409 yet still takes a loader's measures.
 */
class DecodedDaemonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static String q(String... kv) {
        StringBuilder b = new StringBuilder("?");
        for (int i = 0; i < kv.length; i += 2) {
            b.append(i == 0 ? "" : "&").append(kv[i]).append('=').append(URLEncoder.encode(kv[i + 1], StandardCharsets.UTF_8));
        }
        return b.toString();
    }

    private static String sample(String etag, String version) {
        return q("bucket", "data", "key", "train/a.jpg", "etag", etag, "offset", "0", "length", "5", "version", version);
    }

    private static HttpResponse<byte[]> send(HttpClient http, URI uri, String method, byte[] body) throws Exception {
        HttpRequest.BodyPublisher p = body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body);
        return http.send(HttpRequest.newBuilder(uri).method(method, p).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String text(Path f) {
        try {
            return new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static JsonNode json(HttpResponse<byte[]> r) throws Exception {
        return JSON.readTree(r.body());
    }

    @Test
    void anOfferedDecodeIsReadBackCheckedAndNeverUploaded(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("decoded", "25%").start();
                S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/decoded");
            s3.putObject(b -> b.bucket("data").key("train/a.jpg"), RequestBody.fromString("jpeg!"));
            String etag = s3.headObject(b -> b.bucket("data").key("train/a.jpg")).eTag().replace("\"", "");
            byte[] decoded = "FRYS1 decoded pixels".getBytes(StandardCharsets.UTF_8);

            HttpResponse<byte[]> put = send(http, URI.create(api + sample(etag, "m.decode:v1") + "&decode_s=0.004"), "PUT", decoded);
            assertThat(put.statusCode()).as(new String(put.body(), StandardCharsets.UTF_8)).isEqualTo(201);
            HttpResponse<byte[]> got = send(http, URI.create(api + sample(etag, "m.decode:v1")), "GET", null);
            assertThat(got.statusCode()).isEqualTo(200);
            assertThat(got.body()).isEqualTo(decoded);
            assertThat(got.headers().firstValue("x-ferry-decode-seconds")).contains("0.004");
            // another decode version is another entry: a miss
            HttpResponse<byte[]> other = send(http, URI.create(api + sample(etag, "m.decode:v2")), "GET", null);
            assertThat(other.statusCode()).isEqualTo(404);
            assertThat(json(other).at("/error/code").asText()).isEqualTo("NoSuchDecodedSample");

            String lookup = "{\"version\": \"m.decode:v1\", \"samples\": [[\"data\", \"train/a.jpg\", \"" + etag
                    + "\", 0, 5], [\"data\", \"train/a.jpg\", \"" + etag + "\", 5, 5]]}";
            JsonNode held = json(send(http, URI.create(api + "/lookup"), "POST", lookup.getBytes(StandardCharsets.UTF_8)));
            assertThat(held.get("held").asText()).isEqualTo("10");
            assertThat(held.get("keep").asBoolean()).isTrue();

            JsonNode status = JSON.readTree(send(http, ferry.endpoint().resolve("/_ferry/v1/status"), "GET", null).body()).get("decoded");
            assertThat(status.get("mode").asText()).isEqualTo("fixed");
            assertThat(status.get("entries").asLong()).isEqualTo(1);
            long capacity = JSON.readTree(send(http, ferry.endpoint().resolve("/_ferry/v1/cache"), "GET", null).body()).get("capacity_bytes").asLong();
            assertThat(status.get("quota_bytes").asLong()).isEqualTo(capacity / 4); // lent from the tier's blocks
            assertThat(status.get("why").asText()).isEqualTo("25% of the tier decoded, as set");
            // node-local: nothing of it in the store's folder
            try (Stream<Path> files = Files.walk(dir.resolve("upstream"))) {
                assertThat(files.filter(Files::isRegularFile).map(DecodedDaemonTest::text)).noneMatch(t -> t.contains("decoded pixels"));
            }

            // the object changes: its old decode is stale, never served
            s3.putObject(b -> b.bucket("data").key("train/a.jpg"), RequestBody.fromString("jpeg2"));
            HttpResponse<byte[]> stale = send(http, URI.create(api + sample(etag, "m.decode:v1")), "GET", null);
            assertThat(stale.statusCode()).isEqualTo(404);
            status = JSON.readTree(send(http, ferry.endpoint().resolve("/_ferry/v1/status"), "GET", null).body()).get("decoded");
            assertThat(status.get("stale").asLong()).isEqualTo(1);
            assertThat(status.get("entries").asLong()).isZero();

            // bad requests: one sentence each
            HttpResponse<byte[]> noEtag = send(http, URI.create(api + q("bucket", "data", "key", "k", "offset", "0", "length", "1", "version", "v")), "GET", null);
            assertThat(noEtag.statusCode()).isEqualTo(400);
            assertThat(json(noEtag).at("/error/message").asText()).isEqualTo("etag is missing from the query");
            HttpResponse<byte[]> delete = send(http, URI.create(api + sample(etag, "v")), "DELETE", null);
            assertThat(delete.statusCode()).isEqualTo(405);
            assertThat(json(delete).at("/error/message").asText()).isEqualTo("DELETE is not allowed on /_ferry/v1/decoded: it answers GET and PUT");
        }
    }

    @Test
    void offKeepsNoneButTakesMeasures(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("decoded", "off").start();
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/decoded");
            HttpResponse<byte[]> lookup = send(http, URI.create(api + "/lookup"), "POST",
                    "{\"version\": \"v\", \"samples\": []}".getBytes(StandardCharsets.UTF_8));
            assertThat(lookup.statusCode()).isEqualTo(409);
            assertThat(json(lookup).at("/error/message").asText()).isEqualTo("this daemon keeps no decoded samples (--decoded off)");
            HttpResponse<byte[]> report = send(http, URI.create(api + "/report"), "POST",
                    "{\"job\": \"j\", \"decodes\": 16, \"decode_s\": 0.06, \"decoded_bytes\": 1600, \"decoded_sized\": 16}".getBytes(StandardCharsets.UTF_8));
            assertThat(report.statusCode()).isEqualTo(200);
            assertThat(json(report).get("keep").asBoolean()).isFalse();
            JsonNode status = JSON.readTree(send(http, ferry.endpoint().resolve("/_ferry/v1/status"), "GET", null).body()).get("decoded");
            assertThat(status.get("mode").asText()).isEqualTo("off");
        }
    }
}
