package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.RawHttp;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A body sent with {@code Content-Type: application/x-www-form-urlencoded} (curl's {@code --data-binary},
 * urllib) is object data like any other: the embedded store keeps it byte for byte, and a write-back daemon
 * in front of it uploads what it acknowledged; and what a write-back daemon can know its upload would be
 * refused for is refused before it is acknowledged (issue 20 item 5). Raw sockets send what curl sends; boto3
 * and awscli are the real clients.
 */
class UploadableWritesTest {
    private static final String FORM = "application/x-www-form-urlencoded";
    private static final String BODY = "a=1&b=2&c=%41";

    /** The request curl --data-binary sends: unsigned, form-encoded, with a body. */
    private static RawHttp.Answer curlPut(int port, String path, String body) throws Exception {
        return RawHttp.exchange(port, "PUT " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: curl/8.5.0\r\nContent-Type: " + FORM
                + "\r\nContent-Length: " + body.length() + "\r\nConnection: close\r\n\r\n" + body);
    }

    private static RawHttp.Answer get(int port, String path) throws Exception {
        return RawHttp.exchange(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    }

    @Test
    void embeddedStore_keepsAFormEncodedBody_fromCurlBoto3AndAwscli(@TempDir Path dir) throws Exception {
        try (EmbeddedStore store = EmbeddedStore.start(dir.resolve("root"), 0, CloudProfile.none())) {
            assertThat(RawHttp.exchange(store.port(), "PUT /forms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .status()).isEqualTo(200);
            RawHttp.Answer put = curlPut(store.port(), "/forms/curl", BODY);
            assertThat(put.status()).as(put.body()).isEqualTo(200);
            RawHttp.Answer got = get(store.port(), "/forms/curl");
            assertThat(got.body()).isEqualTo(BODY);
            assertThat(got.header("Content-Type")).isEqualTo(FORM);

            Path file = dir.resolve("upload.txt");
            Files.writeString(file, BODY);
            String out = Clients.python(dir, """
                    import sys, boto3
                    s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id="a", aws_secret_access_key="b", region_name="us-east-1")
                    s3.put_object(Bucket="forms", Key="boto3", Body=b"a=1&b=2&c=%41", ContentType="application/x-www-form-urlencoded")
                    got = s3.get_object(Bucket="forms", Key="boto3")
                    assert got["Body"].read() == b"a=1&b=2&c=%41"
                    assert got["ContentType"] == "application/x-www-form-urlencoded", got["ContentType"]
                    print("boto3 ok")
                    """, store.endpoint().toString());
            assertThat(out).contains("boto3 ok");
            out = Clients.awsCli(store.endpoint().toString(), "s3", "cp", file.toString(), "s3://forms/awscli", "--content-type", FORM);
            assertThat(get(store.port(), "/forms/awscli").body()).as(out).isEqualTo(BODY);
        }
    }

    @Test
    void writeBack_formEncodedPut_isUploadedAsAcknowledged(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("write-back", "true").start()) {
            int port = ferry.endpoint().getPort();
            RawHttp.Answer put = curlPut(port, "/data/form", BODY);
            assertThat(put.status()).as(put.body()).isEqualTo(200);
            assertThat(flush(ferry)).startsWith("200 ");
            // the store holds what was acknowledged (the embedded store keeps an object as a file)
            assertThat(Files.readString(dir.resolve("upstream/data/form"))).isEqualTo(BODY);
            RawHttp.Answer got = get(port, "/data/form");
            assertThat(got.body()).isEqualTo(BODY);
            assertThat(got.header("Content-Type")).isEqualTo(FORM);
        }
    }

    private static String flush(DaemonFixture ferry) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> fence = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=60000"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            return fence.statusCode() + " " + fence.body();
        }
    }

    private static RawHttp.Answer putWith(int port, String path, String header) throws Exception {
        return RawHttp.exchange(port, "PUT " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + header
                + "\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
    }

    @Test
    void writeBack_refusesHeadersTheUploadCouldNotCarry_beforeAcknowledging(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("write-back", "true").start()) {
            int port = ferry.endpoint().getPort();
            // within the daemon's 16 KiB header limit, but the upload to an S3 store would be over S3's 8 KiB
            RawHttp.Answer big = putWith(port, "/data/big", "Cache-Control: " + "x".repeat(7000));
            assertThat(big.status()).as(big.body()).isEqualTo(400);
            assertThat(big.body()).contains("<Code>RequestHeaderSectionTooLarge</Code>");
            RawHttp.Answer bigUpload = RawHttp.exchange(port, "POST /data/big?uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nx-amz-meta-a: "
                    + "m".repeat(1000) + "\r\nContent-Disposition: " + "d".repeat(6000) + "\r\nConnection: close\r\n\r\n");
            assertThat(bigUpload.status()).as(bigUpload.body()).isEqualTo(400);
            assertThat(bigUpload.body()).contains("<Code>RequestHeaderSectionTooLarge</Code>");
            // S3 keeps any Expires, s3proxy (the embedded store) refuses one that is not a date
            RawHttp.Answer expires = putWith(port, "/data/expires", "Expires: next tuesday");
            assertThat(expires.status()).as(expires.body()).isEqualTo(400);
            assertThat(expires.body()).contains("<Code>InvalidArgument</Code>");
            // what can be uploaded still is, and nothing acknowledged fails
            assertThat(putWith(port, "/data/fine", "Expires: Wed, 21 Oct 2015 07:28:00 GMT\r\nCache-Control: " + "y".repeat(5000))
                    .status()).isEqualTo(200);
            assertThat(flush(ferry)).startsWith("200 ");
            assertThat(get(port, "/data/fine").header("Expires")).isEqualTo("Wed, 21 Oct 2015 07:28:00 GMT");
            assertThat(get(port, "/data/big").status()).isEqualTo(404);
        }
    }
}
