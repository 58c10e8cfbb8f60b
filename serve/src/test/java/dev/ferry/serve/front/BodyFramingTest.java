package dev.ferry.serve.front;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.RawHttp;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A request body that is not complete and well formed is never stored nor acknowledged, whatever the mode
 * (folder store, S3 upstream, write-back) and whether it is a PUT or an UploadPart: broken HTTP chunked
 * framing, broken aws-chunked framing, and bodies cut short by the client closing. Raw sockets: no client
 * library sends such bodies on purpose. The client shuts its side once it has sent all it will send, so the
 * daemon closes at once instead of waiting for the rest of a body that will not come.
 */
class BodyFramingTest {
    /**
     * A broken body: its name (also the key), the headers that frame it, the bytes sent, and whether they stop
     * short of the end the framing announced (the client dies mid-body: nobody is left to answer).
     */
    record Broken(String name, String headers, String body, boolean cutShort) {
    }

    private static final String TE = "Transfer-Encoding: chunked\r\n";

    private static String awsChunked(int framedLength) {
        return "Content-Length: " + framedLength + "\r\nContent-Encoding: aws-chunked\r\nx-amz-content-sha256: "
                + "STREAMING-UNSIGNED-PAYLOAD-TRAILER\r\nx-amz-decoded-content-length: 5\r\n";
    }

    static final List<Broken> CASES = List.of(
            new Broken("te-bad-size", TE, "5\r\nhello\r\nzz\r\nworld\r\n0\r\n\r\n", false),
            new Broken("te-overrun", TE, "5\r\nhelloEXTRA\r\n0\r\n\r\n", false),
            new Broken("te-garbage", TE, "5\r\nhello\r\n%%%% not a chunk\r\n\r\n", false),
            new Broken("te-hang-up", TE, "5\r\nhello\r\n", true),
            new Broken("aws-overrun", awsChunked(21), "5\r\nhelloEXTRA\r\n0\r\n\r\n", false),
            new Broken("aws-garbage", awsChunked(26), "5\r\nhello\r\n%%%% not a chunk\r\n\r\n", false),
            new Broken("aws-in-te-bad-size", TE + "Content-Encoding: aws-chunked\r\nx-amz-decoded-content-length: 5\r\n",
                    "a\r\n5\r\nhello\r\n\r\nzz\r\n", false),
            new Broken("aws-hang-up", awsChunked(15), "5\r\nhello\r\n", true),
            new Broken("short-length", "Content-Length: 100\r\n", "hello", true));

    private static void assertRefused(Broken c, RawHttp.Answer a) {
        if (c.cutShort()) {
            assertThat(a.status()).as("%s: a body cut short is not acknowledged: %s", c.name(), a.head()).isNotEqualTo(200);
        } else {
            assertThat(a.status()).as("%s: %s %s", c.name(), a.head(), a.body()).isEqualTo(400);
            assertThat(a.body()).as(c.name()).contains("<Code>IncompleteBody</Code>");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void put_withBrokenFraming_isRefusedAndStoresNothing(String mode, @TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); HttpClient http = HttpClient.newHttpClient()) {
            int port = ferry.daemon.port();
            for (Broken c : CASES) {
                String put = "PUT /data/" + c.name() + " HTTP/1.1\r\nHost: x\r\n" + c.headers() + "Connection: close\r\n\r\n" + c.body();
                assertRefused(c, RawHttp.exchange(port, put, true));
            }
            HttpResponse<String> flush = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=30000"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(flush.statusCode()).isEqualTo(200);
            for (Broken c : CASES) {
                RawHttp.Answer get = RawHttp.exchange(port, "GET /data/" + c.name() + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                assertThat(get.status()).as("%s is not stored: %s", c.name(), get.body()).isEqualTo(404);
                if (ferry.root != null) {
                    assertThat(Files.exists(ferry.root.resolve("data").resolve(c.name()))).as(c.name()).isFalse();
                }
            }
            // the daemon still takes a well-formed chunked PUT
            RawHttp.Answer ok = RawHttp.exchange(port, "PUT /data/good HTTP/1.1\r\nHost: x\r\n" + TE + "Connection: close\r\n\r\n"
                    + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
            assertThat(ok.status()).as(ok.body()).isEqualTo(200);
            assertThat(RawHttp.exchange(port, "GET /data/good HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").body())
                    .isEqualTo("hello world");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void uploadPart_withBrokenFraming_isRefusedAndStoresNoPart(String mode, @TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start()) {
            int port = ferry.daemon.port();
            for (Broken c : CASES) {
                String key = "/data/mp-" + c.name();
                RawHttp.Answer started = RawHttp.exchange(port, "POST " + key + "?uploads HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                        + "Connection: close\r\n\r\n");
                String id = between(started.body(), "<UploadId>", "</UploadId>");
                String part = "PUT " + key + "?partNumber=1&uploadId=" + id + " HTTP/1.1\r\nHost: x\r\n" + c.headers()
                        + "Connection: close\r\n\r\n" + c.body();
                assertRefused(c, RawHttp.exchange(port, part, true));
                // part 2 holds what a truncated part 1 would: completing with part 1 under that ETag must fail
                RawHttp.Answer two = RawHttp.exchange(port, "PUT " + key + "?partNumber=2&uploadId=" + id
                        + " HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
                assertThat(two.status()).as(two.body()).isEqualTo(200);
                String complete = "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + two.header("ETag")
                        + "</ETag></Part></CompleteMultipartUpload>";
                RawHttp.Answer done = RawHttp.exchange(port, "POST " + key + "?uploadId=" + id + " HTTP/1.1\r\nHost: x\r\nContent-Length: "
                        + complete.length() + "\r\nConnection: close\r\n\r\n" + complete);
                assertThat(done.status()).as("%s: part 1 was not stored: %s", c.name(), done.body()).isEqualTo(400);
                assertThat(done.body()).contains("InvalidPart");
            }
        }
    }

    private static String between(String s, String from, String to) {
        int a = s.indexOf(from);
        assertThat(a).as(s).isNotNegative();
        return s.substring(a + from.length(), s.indexOf(to, a));
    }
}
