package dev.ferry.serve.front;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.DaemonFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * With credentials configured, every request must carry a valid AWS Signature V4: the SDK's signed requests
 * (signed chunks for uploads over plain HTTP) and presigned URLs pass; a wrong secret, an unsigned request
 * or a tampered body does not. Time is checked as S3 checks it (issue 20 item 8): a presigned URL lives at
 * most a week and not before its date, a header-signed request must be within 15 minutes of the clock.
 */
class SignatureTest {
    @TempDir
    static Path dir;
    static DaemonFixture ferry;

    @BeforeAll
    static void start() throws Exception {
        ferry = DaemonFixture.overFolder(dir).with("access-key", "AKFERRYTEST").with("secret-key", "s3cr3t/key+value").start();
    }

    @AfterAll
    static void stop() {
        ferry.close();
    }

    @Test
    void theRightKeyWorksForReadsWritesAndMultipart() {
        try (S3Client s3 = ferry.sdk("AKFERRYTEST", "s3cr3t/key+value")) {
            byte[] data = new byte[3 << 20];
            new java.util.Random(5).nextBytes(data);
            s3.putObject(b -> b.bucket("data").key("signed/a b+c.bin"), RequestBody.fromBytes(data));
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("signed/a b+c.bin")).asByteArray()).isEqualTo(data);
            assertThat(s3.listObjectsV2(b -> b.bucket("data").prefix("signed/")).contents()).hasSize(1);
            String id = s3.createMultipartUpload(b -> b.bucket("data").key("signed/mp")).uploadId();
            String etag = s3.uploadPart(b -> b.bucket("data").key("signed/mp").uploadId(id).partNumber(1), RequestBody.fromBytes(data)).eTag();
            s3.completeMultipartUpload(b -> b.bucket("data").key("signed/mp").uploadId(id)
                    .multipartUpload(m -> m.parts(p -> p.partNumber(1).eTag(etag))));
            assertThat(s3.headObject(b -> b.bucket("data").key("signed/mp")).contentLength()).isEqualTo(data.length);
        }
    }

    @Test
    void aWrongSecretOrAnUnknownKeyIsRefused() {
        try (S3Client s3 = ferry.sdk("AKFERRYTEST", "wrong")) {
            assertThatThrownBy(() -> s3.listObjectsV2(b -> b.bucket("data"))).isInstanceOfSatisfying(S3Exception.class, e -> {
                assertThat(e.statusCode()).isEqualTo(403);
                assertThat(e.awsErrorDetails().errorCode()).isEqualTo("SignatureDoesNotMatch");
            });
            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("data").key("nope"), RequestBody.fromString("x")))
                    .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(403));
        }
        try (S3Client s3 = ferry.sdk("SOMEONEELSE", "s3cr3t/key+value")) {
            assertThatThrownBy(() -> s3.listObjectsV2(b -> b.bucket("data"))).isInstanceOfSatisfying(S3Exception.class,
                    e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("InvalidAccessKeyId"));
        }
    }

    @Test
    void unsignedRequestsAreRefusedButTheStatusPageIsPublic() throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/data/x")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(403);
            assertThat(r.body()).contains("<Code>AccessDenied</Code>");
            HttpResponse<String> job = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/jobs"))
                    .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(job.statusCode()).isEqualTo(403);
            HttpResponse<String> status = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/status")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(status.statusCode()).isEqualTo(200);
        }
    }

    @Test
    void ferrysOwnPresignedFlush_passes_andWithAnotherSecretIsRefused() throws Exception {
        String host = ferry.endpoint().getHost() + ":" + ferry.endpoint().getPort();
        try (HttpClient http = HttpClient.newHttpClient()) {
            String query = new dev.ferry.serve.protocol.SigV4("AKFERRYTEST", "s3cr3t/key+value").presignedQuery("POST", "/_ferry/v1/flush",
                    "timeout_ms=5000", host, "us-east-1", java.time.Instant.now(), Duration.ofMinutes(1));
            HttpResponse<String> ok = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?" + query))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
            assertThat(ok.body()).contains("\"complete\":true");
            String forged = new dev.ferry.serve.protocol.SigV4("AKFERRYTEST", "guess").presignedQuery("POST", "/_ferry/v1/flush",
                    "timeout_ms=5000", host, "us-east-1", java.time.Instant.now(), Duration.ofMinutes(1));
            HttpResponse<String> refused = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?" + forged))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode()).isEqualTo(403);
            assertThat(refused.body()).contains("SignatureDoesNotMatch");
        }
    }

    @Test
    void presignedUrlsWorkUntilTheyExpire() throws Exception {
        try (S3Client s3 = ferry.sdk("AKFERRYTEST", "s3cr3t/key+value")) {
            s3.putObject(b -> b.bucket("data").key("shared.txt"), RequestBody.fromString("presigned hello"));
        }
        try (S3Presigner presigner = S3Presigner.builder().endpointOverride(ferry.endpoint()).region(Region.US_EAST_1)
                .serviceConfiguration(software.amazon.awssdk.services.s3.S3Configuration.builder().pathStyleAccessEnabled(true).build())
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKFERRYTEST", "s3cr3t/key+value")))
                .build(); HttpClient http = HttpClient.newHttpClient()) {
            URI url = presigner.presignGetObject(p -> p.signatureDuration(Duration.ofMinutes(5))
                    .getObjectRequest(g -> g.bucket("data").key("shared.txt"))).url().toURI();
            HttpResponse<String> ok = http.send(HttpRequest.newBuilder(url).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("presigned hello");
            URI tampered = URI.create(url.toString().replace("shared.txt", "other.txt"));
            assertThat(http.send(HttpRequest.newBuilder(tampered).build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(403);
        }
    }

    @Test
    void aBodyThatDoesNotMatchItsSignedDigestIsRefused() throws Exception {
        // sign a PUT for one body with the SDK's signer, then send another body under the same headers
        var signer = software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.create();
        var request = software.amazon.awssdk.http.SdkHttpFullRequest.builder().method(software.amazon.awssdk.http.SdkHttpMethod.PUT)
                .uri(ferry.endpoint().resolve("/data/tamper.txt")).putHeader("Content-Length", "5").build();
        var signed = signer.sign(r -> r.request(request).payload(software.amazon.awssdk.http.ContentStreamProvider.fromUtf8String("hello"))
                .identity(AwsBasicCredentials.create("AKFERRYTEST", "s3cr3t/key+value"))
                .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.SERVICE_SIGNING_NAME, "s3")
                .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.REGION_NAME, "us-east-1")
                .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, true));
        HttpRequest.Builder b = HttpRequest.newBuilder(ferry.endpoint().resolve("/data/tamper.txt"));
        signed.request().headers().forEach((k, v) -> {
            if (!k.equalsIgnoreCase("Host") && !k.equalsIgnoreCase("Content-Length")) {
                v.forEach(x -> b.header(k, x));
            }
        });
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> bad = http.send(b.copy().PUT(HttpRequest.BodyPublishers.ofString("HELLO")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(bad.body()).contains("XAmzContentSHA256Mismatch");
            HttpResponse<String> good = http.send(b.copy().PUT(HttpRequest.BodyPublishers.ofString("hello")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(good.statusCode()).isEqualTo(200);
        }
    }

    /**
     * A presigned GET of {@code path} dated {@code signedAt}, valid for {@code expires} seconds, signed by the
     * SigV4 query-string algorithm as published: SDKs refuse to make most of the URLs these tests need (a
     * lifetime over a week, a date far from the clock).
     */
    static URI presign(URI endpoint, String path, Instant signedAt, long expires) throws Exception {
        String date = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC).format(signedAt);
        String day = date.substring(0, 8);
        TreeMap<String, String> query = new TreeMap<>();
        query.put("X-Amz-Algorithm", "AWS4-HMAC-SHA256");
        query.put("X-Amz-Credential", "AKFERRYTEST/" + day + "/us-east-1/s3/aws4_request");
        query.put("X-Amz-Date", date);
        query.put("X-Amz-Expires", Long.toString(expires));
        query.put("X-Amz-SignedHeaders", "host");
        StringBuilder canonicalQuery = new StringBuilder();
        query.forEach((k, v) -> canonicalQuery.append(canonicalQuery.isEmpty() ? "" : "&").append(awsEncode(k)).append('=').append(awsEncode(v)));
        String canonical = "GET\n" + path + "\n" + canonicalQuery + "\nhost:" + endpoint.getHost() + ":" + endpoint.getPort() + "\n\nhost\n"
                + "UNSIGNED-PAYLOAD";
        String toSign = "AWS4-HMAC-SHA256\n" + date + "\n" + day + "/us-east-1/s3/aws4_request\n"
                + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8)));
        byte[] key = hmac(("AWS4" + "s3cr3t/key+value").getBytes(StandardCharsets.UTF_8), day);
        for (String part : new String[] {"us-east-1", "s3", "aws4_request"}) {
            key = hmac(key, part);
        }
        return URI.create(endpoint + path + "?" + canonicalQuery + "&X-Amz-Signature=" + HexFormat.of().formatHex(hmac(key, toSign)));
    }

    private static byte[] hmac(byte[] key, String data) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
    }

    private static String awsEncode(String s) {
        StringBuilder out = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if (Character.isLetterOrDigit(c) && c < 128 || c == '-' || c == '_' || c == '.' || c == '~') {
                out.append(c);
            } else {
                out.append(String.format("%%%02X", b & 0xff));
            }
        }
        return out.toString();
    }

    private static HttpResponse<String> get(HttpClient http, URI url) throws Exception {
        return http.send(HttpRequest.newBuilder(url).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void presignedUrls_areRefusedOverAWeek_beforeTheirDate_andAfterTheyExpire() throws Exception {
        try (S3Client s3 = ferry.sdk("AKFERRYTEST", "s3cr3t/key+value")) {
            s3.putObject(b -> b.bucket("data").key("lifetime.txt"), RequestBody.fromString("lifetime"));
        }
        URI at = ferry.endpoint();
        String path = "/data/lifetime.txt";
        Instant now = Instant.now();
        try (HttpClient http = HttpClient.newHttpClient()) {
            // the helper signs as S3 does: these pass
            assertThat(get(http, presign(at, path, now, 300)).body()).isEqualTo("lifetime");
            assertThat(get(http, presign(at, path, now, 604800)).statusCode()).isEqualTo(200);
            assertThat(get(http, presign(at, path, now.plusSeconds(300), 300)).statusCode()).as("within the clock skew S3 allows")
                    .isEqualTo(200);
            for (long expires : new long[] {604801, 31536000, 1L << 31, -1}) {
                HttpResponse<String> r = get(http, presign(at, path, now, expires));
                assertThat(r.statusCode()).as("X-Amz-Expires=" + expires).isEqualTo(400);
                assertThat(r.body()).contains("<Code>AuthorizationQueryParametersError</Code>").contains("X-Amz-Expires");
            }
            for (Instant signedAt : new Instant[] {now.minus(Duration.ofDays(400)), now.minus(Duration.ofDays(8)), now.minusSeconds(600)}) {
                HttpResponse<String> r = get(http, presign(at, path, signedAt, signedAt.isBefore(now.minus(Duration.ofDays(1))) ? 604800 : 300));
                assertThat(r.statusCode()).as("signed at " + signedAt).isEqualTo(403);
                assertThat(r.body()).contains("<Code>AccessDenied</Code>").contains("Request has expired");
            }
            HttpResponse<String> ahead = get(http, presign(at, path, now.plus(Duration.ofDays(2)), 300));
            assertThat(ahead.statusCode()).isEqualTo(403);
            assertThat(ahead.body()).contains("<Code>AccessDenied</Code>").contains("Request is not yet valid");
        }
    }

    @Test
    void aHeaderSignedRequestFarFromTheClock_isRequestTimeTooSkewed() throws Exception {
        for (Duration skew : new Duration[] {Duration.ofMinutes(20), Duration.ofMinutes(-20), Duration.ofDays(2)}) {
            var signer = software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.create();
            var request = software.amazon.awssdk.http.SdkHttpFullRequest.builder().method(software.amazon.awssdk.http.SdkHttpMethod.GET)
                    .uri(ferry.endpoint().resolve("/data/skewed.txt")).build();
            var signed = signer.sign(r -> r.request(request).identity(AwsBasicCredentials.create("AKFERRYTEST", "s3cr3t/key+value"))
                    .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.SERVICE_SIGNING_NAME, "s3")
                    .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.REGION_NAME, "us-east-1")
                    .putProperty(software.amazon.awssdk.http.auth.spi.signer.HttpSigner.SIGNING_CLOCK,
                            Clock.offset(Clock.systemUTC(), skew)));
            HttpRequest.Builder b = HttpRequest.newBuilder(ferry.endpoint().resolve("/data/skewed.txt"));
            signed.request().headers().forEach((k, v) -> {
                if (!k.equalsIgnoreCase("Host")) {
                    v.forEach(x -> b.header(k, x));
                }
            });
            try (HttpClient http = HttpClient.newHttpClient()) {
                HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as("skew " + skew).isEqualTo(403);
                assertThat(r.body()).contains("<Code>RequestTimeTooSkewed</Code>");
            }
        }
    }

    /** The 15 x-amz-* request headers S3 defines for PUT, GET and COPY that change what a request does. */
    static final String[][] AMZ_HEADERS = {
            {"x-amz-copy-source", "/data/other.txt"}, {"x-amz-copy-source-range", "bytes=0-1"},
            {"x-amz-copy-source-if-match", "\"abc\""}, {"x-amz-metadata-directive", "REPLACE"},
            {"x-amz-tagging-directive", "REPLACE"}, {"x-amz-meta-owner", "mallory"}, {"x-amz-acl", "public-read"},
            {"x-amz-grant-full-control", "id=mallory"}, {"x-amz-tagging", "k=v"}, {"x-amz-storage-class", "GLACIER"},
            {"x-amz-server-side-encryption", "AES256"}, {"x-amz-website-redirect-location", "/elsewhere"},
            {"x-amz-checksum-sha256", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}, {"x-amz-request-payer", "requester"},
            {"x-amz-expected-bucket-owner", "111122223333"}};

    /** A request to {@code path} signed by the SDK's signer, headers as sent (Host and Content-Length left to the client). */
    static HttpRequest.Builder sdkSigned(String method, String path, String body) {
        var signer = software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.create();
        var builder = software.amazon.awssdk.http.SdkHttpFullRequest.builder().method(software.amazon.awssdk.http.SdkHttpMethod.fromValue(method))
                .uri(ferry.endpoint().resolve(path));
        if (body != null) {
            builder.putHeader("Content-Length", Integer.toString(body.length()));
        }
        var request = builder.build();
        var signed = signer.sign(r -> {
            r.request(request).identity(AwsBasicCredentials.create("AKFERRYTEST", "s3cr3t/key+value"))
                    .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.SERVICE_SIGNING_NAME, "s3")
                    .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.REGION_NAME, "us-east-1")
                    .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, true);
            if (body != null) {
                r.payload(software.amazon.awssdk.http.ContentStreamProvider.fromUtf8String(body));
            }
        });
        HttpRequest.Builder b = HttpRequest.newBuilder(ferry.endpoint().resolve(path));
        signed.request().headers().forEach((k, v) -> {
            if (!k.equalsIgnoreCase("Host") && !k.equalsIgnoreCase("Content-Length")) {
                v.forEach(x -> b.header(k, x));
            }
        });
        return b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    }

    @Test
    void everyUnsignedAmzHeader_isRefused_andTheSignedRequestStillPasses() throws Exception {
        try (S3Client s3 = ferry.sdk("AKFERRYTEST", "s3cr3t/key+value"); HttpClient http = HttpClient.newHttpClient()) {
            s3.putObject(b -> b.bucket("data").key("other.txt"), RequestBody.fromString("the other object"));
            s3.putObject(b -> b.bucket("data").key("victim.txt"), RequestBody.fromString("the victim"));
            for (String[] header : AMZ_HEADERS) {
                for (String method : new String[] {"PUT", "GET"}) {
                    HttpRequest.Builder b = sdkSigned(method, "/data/victim.txt", method.equals("PUT") ? "" : null);
                    HttpResponse<String> r = http.send(b.header(header[0], header[1]).build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).as(method + " with an unsigned " + header[0]).isEqualTo(403);
                    assertThat(r.body()).contains("<Code>AccessDenied</Code>").contains("not signed").contains(header[0]);
                }
            }
            for (String[] header : new String[][] {{"Content-Type", "text/html"}, {"Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg=="}}) {
                HttpResponse<String> r = http.send(sdkSigned("PUT", "/data/victim.txt", "").header(header[0], header[1]).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as("a header-signed PUT with an unsigned " + header[0]).isEqualTo(403);
            }
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("victim.txt")).asUtf8String()).isEqualTo("the victim");
            assertThat(s3.headObject(b -> b.bucket("data").key("victim.txt")).metadata()).doesNotContainKey("owner");
            // the same request, signed as it was sent, still does what it says
            HttpResponse<String> plain = http.send(sdkSigned("PUT", "/data/victim.txt", "").build(), HttpResponse.BodyHandlers.ofString());
            assertThat(plain.statusCode()).isEqualTo(200);
            assertThat(s3.headObject(b -> b.bucket("data").key("victim.txt")).contentLength()).isZero();
        }
    }

    @Test
    void aPresignedUrl_withAnAuthorizationHeaderToo_isRefused() throws Exception {
        try (S3Client s3 = ferry.sdk("AKFERRYTEST", "s3cr3t/key+value"); HttpClient http = HttpClient.newHttpClient()) {
            s3.putObject(b -> b.bucket("data").key("twice.txt"), RequestBody.fromString("twice"));
            URI url = presign(ferry.endpoint(), "/data/twice.txt", Instant.now(), 300);
            assertThat(get(http, url).statusCode()).isEqualTo(200);
            HttpRequest signedToo = sdkSigned("GET", "/data/twice.txt", null).uri(url).build();
            HttpResponse<String> r = http.send(signedToo, HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(400);
            assertThat(r.body()).contains("<Code>InvalidArgument</Code>").contains("Only one auth mechanism allowed");
            // a presigned URL with an unsigned x-amz-* header is refused too
            HttpResponse<String> extra = http.send(HttpRequest.newBuilder(url).header("x-amz-request-payer", "requester").build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(extra.statusCode()).isEqualTo(403);
            assertThat(extra.body()).contains("not signed");
        }
    }
}
