package dev.ferry.serve.front;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonFixture;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A corpus of malformed and hostile requests, sent over raw sockets: each gets a 4xx with an S3 error code
 * (never a 5xx but 501 for what ferry does not implement, never a hang or a crash), nothing is written outside the store root, and the daemon then still
 * serves a normal read correctly.
 */
class MalformedRequestTest {
    @TempDir
    static Path dir;
    static DaemonFixture ferry;

    @BeforeAll
    static void start() throws Exception {
        ferry = DaemonFixture.overFolder(dir).with("max-xml-bytes", "4KiB").start();
        Files.writeString(ferry.root.resolve("data/ok.txt"), "still here");
    }

    @AfterAll
    static void stop() {
        ferry.close();
    }

    record Answer(int status, String head, String body) {
    }

    /** Sends raw bytes, reads the whole answer (the daemon must answer, and within the socket timeout). */
    static Answer send(String raw) throws IOException {
        return send(raw.getBytes(StandardCharsets.ISO_8859_1));
    }

    static Answer send(byte[] raw) throws IOException {
        try (Socket s = new Socket("127.0.0.1", ferry.daemon.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(raw);
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) > 0) {
                got.write(buf, 0, n);
                String text = got.toString(StandardCharsets.ISO_8859_1);
                int end = text.indexOf("\r\n\r\n");
                if (end > 0) {
                    int length = contentLength(text.substring(0, end));
                    if (length >= 0 && text.length() >= end + 4 + length) {
                        break;
                    }
                }
            }
            String text = got.toString(StandardCharsets.UTF_8);
            int end = text.indexOf("\r\n\r\n");
            assertThat(end).as("a complete HTTP answer to %s", new String(raw, 0, Math.min(raw.length, 60), StandardCharsets.ISO_8859_1))
                    .isPositive();
            String head = text.substring(0, end);
            return new Answer(Integer.parseInt(head.split(" ")[1]), head, text.substring(end + 4));
        }
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                return Integer.parseInt(line.substring(15).trim());
            }
        }
        return -1;
    }

    private static String get(String target, String... headers) {
        return "GET " + target + " HTTP/1.1\r\nHost: x\r\n" + String.join("", headers) + "Connection: close\r\n\r\n";
    }

    private static String withBody(String method, String target, String body, String... headers) {
        return method + " " + target + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n"
                + String.join("", headers) + "Connection: close\r\n\r\n" + body;
    }

    @Test
    void everyMalformedRequestGetsA4xxWithAnS3Code() throws Exception {
        String longKey = "k".repeat(1100);
        List<Object[]> corpus = List.of(
                new Object[] {get("/data/ok.txt", "Range: bytes=abc\r\n"), "InvalidArgument"},
                new Object[] {get("/data/ok.txt", "Range: items=0-1\r\n"), "InvalidArgument"},
                new Object[] {get("/data/ok.txt", "Range: bytes=5-2\r\n"), "InvalidArgument"},
                new Object[] {get("/data/ok.txt", "Range: bytes=100-200\r\n"), "InvalidRange"},
                new Object[] {get("/data/ok.txt", "Range: bytes=-0\r\n"), "InvalidRange"},
                new Object[] {get("/data/../../etc/passwd"), "InvalidArgument"},
                new Object[] {get("/data/a/%2e%2e/%2e%2e/%2e%2e/etc/passwd"), "InvalidArgument"},
                new Object[] {get("/data/..%2F..%2Fetc%2Fpasswd"), "InvalidArgument"},
                new Object[] {get("/data/x%00y"), "InvalidArgument"},
                new Object[] {get("/data/%zz"), "InvalidArgument"},
                new Object[] {get("/data/%C3%28"), "InvalidArgument"},
                new Object[] {get("/data/" + longKey), "KeyTooLongError"},
                new Object[] {get("/Bad_Bucket/x"), "InvalidBucketName"},
                new Object[] {get("/../x"), "InvalidBucketName"},
                new Object[] {get("/data/ok.txt?tagging"), "NotImplemented"},
                new Object[] {get("/data/ok.txt?attributes"), "InvalidArgument"},
                new Object[] {withBody("PUT", "/data/ok.txt?acl", "", "x-amz-acl: public-read\r\n"), "AccessControlListNotSupported"},
                new Object[] {get("/data?versioning"), "NotImplemented"},
                new Object[] {get("/data?list-type=3"), "InvalidArgument"},
                new Object[] {get("/data?list-type=2&max-keys=lots"), "InvalidArgument"},
                new Object[] {get("/data?list-type=2&encoding-type=base64"), "InvalidArgument"},
                new Object[] {get("/data?list-type=2&continuation-token=ferry1.%25%25"), "InvalidArgument"},
                new Object[] {withBody("PATCH", "/data/ok.txt", ""), "NotImplemented"},
                new Object[] {withBody("POST", "/data/mp?uploadId=abc", "<CompleteMultipartUpload><Part>"), "MalformedXML"},
                new Object[] {withBody("POST", "/data/mp?uploadId=abc", "not xml at all"), "MalformedXML"},
                new Object[] {withBody("POST", "/data/mp?uploadId=abc",
                        "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><CompleteMultipartUpload>&e;</CompleteMultipartUpload>"),
                        "MalformedXML"},
                new Object[] {withBody("POST", "/data/mp?uploadId=abc", "<CompleteMultipartUpload></CompleteMultipartUpload>"), "MalformedXML"},
                new Object[] {withBody("POST", "/data/mp?uploadId=abc",
                        "<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>a</ETag></Part>"
                                + "<Part><PartNumber>1</PartNumber><ETag>b</ETag></Part></CompleteMultipartUpload>"), "InvalidPartOrder"},
                new Object[] {withBody("POST", "/data/mp?uploadId=abc", "<Wrong/>"), "MalformedXML"},
                new Object[] {withBody("POST", "/data/mp?uploadId=abc", ""), "MalformedXML"}, // no body at all: S3's 400, not 411
                new Object[] {withBody("POST", "/data/mp?uploadId=abc", "<CompleteMultipartUpload>" + "x".repeat(5000)
                        + "</CompleteMultipartUpload>"), "EntityTooLarge"},
                new Object[] {withBody("PUT", "/data/mp?uploadId=abc&partNumber=0", "x"), "InvalidArgument"},
                new Object[] {withBody("PUT", "/data/mp?uploadId=abc&partNumber=10001", "x"), "InvalidArgument"},
                new Object[] {withBody("PUT", "/data/mp?uploadId=..%2F..%2Fescape&partNumber=1", "x"), "NoSuchUpload"},
                new Object[] {withBody("PUT", "/data/md5.txt", "hello", "Content-MD5: XrY7u+Ae7tCTyyK7j1rNww==\r\n"), "BadDigest"},
                new Object[] {withBody("PUT", "/data/md5.txt", "hello", "Content-MD5: ???\r\n"), "InvalidDigest"},
                new Object[] {withBody("PUT", "/data/crc.txt", "hello", "x-amz-checksum-crc32: AAAAAA==\r\n"), "BadDigest"},
                new Object[] {withBody("PUT", "/data/sha.txt", "hello", "x-amz-content-sha256: " + "0".repeat(64) + "\r\n"),
                        "XAmzContentSHA256Mismatch"},
                new Object[] {withBody("PUT", "/data/chunked.txt", "zz\r\nhello\r\n0\r\n\r\n",
                        "Content-Encoding: aws-chunked\r\nx-amz-decoded-content-length: 5\r\n"), "IncompleteBody"},
                new Object[] {withBody("PUT", "/data/chunked.txt", "5\r\nhello\r\n", "Content-Encoding: aws-chunked\r\n"
                        + "x-amz-decoded-content-length: 5\r\n"), "IncompleteBody"},
                new Object[] {withBody("PUT", "/data/chunked.txt", "5\r\nhello\r\n0\r\n\r\n", "Content-Encoding: aws-chunked\r\n"),
                        "MissingContentLength"},
                new Object[] {withBody("PUT", "/data/chunked.txt", "5\r\nhello\r\n0\r\n\r\n", "Content-Encoding: aws-chunked\r\n"
                        + "x-amz-decoded-content-length: 9\r\n"), "IncompleteBody"},
                new Object[] {withBody("PUT", "/data/copy.txt", "", "x-amz-copy-source: /data\r\n"), "InvalidArgument"},
                new Object[] {withBody("PUT", "/data/copy.txt", "", "x-amz-copy-source: /data/ok.txt?versionId=1\r\n"), "NotImplemented"},
                new Object[] {withBody("PUT", "/data/copy.txt", "x", "x-amz-copy-source: /data/ok.txt\r\n"), "InvalidRequest"},
                new Object[] {withBody("POST", "/data?delete", "<Delete><Object></Object></Delete>"), "MalformedXML"},
                new Object[] {withBody("POST", "/_ferry/v1/jobs", "{not json"), "InvalidJson"},
                new Object[] {withBody("POST", "/_ferry/v1/jobs", "{\"job\": \"../x\", \"ranks\": [[\"data/ok.txt\"]]}"), "InvalidArgument"},
                new Object[] {withBody("POST", "/_ferry/v1/jobs", "{\"job\": \"j\", \"ranks\": [[\"data/../x\"]]}"), "InvalidArgument"},
                new Object[] {withBody("POST", "/_ferry/v1/jobs", "{\"job\": \"j\"}"), "InvalidArgument"},
                new Object[] {withBody("POST", "/_ferry/v1/jobs/none/progress", "{}"), "NoSuchJob"},
                new Object[] {get("/_ferry/v1/nothing"), "NoSuchEndpoint"},
                new Object[] {"GET /data/ok.txt HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(20_000) + "\r\n\r\n", "RequestHeaderSectionTooLarge"},
                new Object[] {"GET /" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: x\r\n\r\n", "RequestHeaderSectionTooLarge"},
                new Object[] {"BLAH\r\n\r\n", null},
                new Object[] {"GET data/ok.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "InvalidArgument"});
        for (Object[] c : corpus) {
            String raw = (String) c[0];
            Answer a = send(raw);
            String what = raw.substring(0, Math.min(raw.length(), 100)).replace("\r\n", " | ");
            if ("NotImplemented".equals(c[1])) {
                assertThat(a.status()).as("status for %s: %s", what, a.body()).isEqualTo(501);
            } else {
                assertThat(a.status()).as("status for %s: %s", what, a.body()).isBetween(400, 499);
            }
            if (c[1] != null) {
                assertThat(a.body()).as("error code for %s", what).contains((String) c[1]);
            }
        }
        assertThat(send(get("/data/ok.txt")).body()).isEqualTo("still here");
        assertThat(ferry.stats().serverErrors()).isZero();
        try (Stream<Path> files = Files.walk(dir)) {
            assertThat(files.filter(p -> p.getFileName().toString().equals("escape") || p.getFileName().toString().equals("passwd")))
                    .isEmpty();
        }
        assertThat(Files.exists(ferry.root.resolve("data/md5.txt"))).as("a PUT whose digest failed is not stored").isFalse();
        assertThat(Files.exists(ferry.root.resolve("data/chunked.txt"))).isFalse();
    }

    @Test
    void aClientThatStopsMidBodyDoesNotHoldTheDaemon() throws Exception {
        try (Socket s = new Socket("127.0.0.1", ferry.daemon.port())) {
            s.getOutputStream().write("PUT /data/half.bin HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nonly a little"
                    .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            assertThat(send(get("/data/ok.txt")).body()).isEqualTo("still here"); // others are served meanwhile
        }
        assertThat(Files.exists(ferry.root.resolve("data/half.bin"))).as("a body cut short is never stored").isFalse();
        assertThat(send(get("/data/ok.txt")).body()).isEqualTo("still here");
    }

    @Test
    void keepAliveConnectionsServeRequestAfterRequest() throws Exception {
        String two = "GET /data/ok.txt HTTP/1.1\r\nHost: x\r\n\r\n" + get("/data/ok.txt");
        try (Socket s = new Socket("127.0.0.1", ferry.daemon.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(two.getBytes(StandardCharsets.US_ASCII));
            String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(all.split("HTTP/1.1 200", -1)).hasSize(3);
            assertThat(all.split("still here", -1)).hasSize(3);
        }
    }
}
