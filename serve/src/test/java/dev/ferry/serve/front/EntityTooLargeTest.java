package dev.ferry.serve.front;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonFixture;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A PUT or UploadPart that declares more than 5 GiB (S3's largest) is refused from its headers with
 * 400 EntityTooLarge, before any 100 Continue and before a byte of its body is read (issue 20 item 10).
 */
class EntityTooLargeTest {
    private static final long FIVE_GIB = 5L << 30;

    @TempDir
    static Path dir;
    static DaemonFixture ferry;

    @BeforeAll
    static void start() throws Exception {
        ferry = DaemonFixture.overFolder(dir).start();
    }

    @AfterAll
    static void stop() {
        ferry.close();
    }

    /** Sends headers only and returns the first answer: its status line, headers and body (by Content-Length). */
    private static String firstAnswer(String head) throws Exception {
        try (Socket s = new Socket("127.0.0.1", ferry.endpoint().getPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            while (!got.toString(StandardCharsets.ISO_8859_1).contains("\r\n\r\n")) {
                got.write(in.read());
            }
            String text = got.toString(StandardCharsets.ISO_8859_1);
            int length = 0;
            for (String line : text.split("\r\n")) {
                if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                    length = Integer.parseInt(line.substring(15).trim());
                }
            }
            return text + new String(in.readNBytes(length), StandardCharsets.UTF_8);
        }
    }

    private static String put(String target, long length, String extra) {
        return "PUT " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + length + "\r\nExpect: 100-continue\r\n" + extra + "\r\n";
    }

    @Test
    void aPutOrPartDeclaringOver5GiB_isEntityTooLarge_beforeContinue() throws Exception {
        for (String target : new String[] {"/data/huge.bin", "/data/huge.bin?partNumber=1&uploadId=abc"}) {
            String answer = firstAnswer(put(target, FIVE_GIB + 1, ""));
            assertThat(answer).as(target).startsWith("HTTP/1.1 400").contains("<Code>EntityTooLarge</Code>")
                    .doesNotContain("100 Continue");
        }
        // aws-chunked declares its object's length apart from the framing's
        String chunked = firstAnswer(put("/data/huge.bin", 1000, "Content-Encoding: aws-chunked\r\nx-amz-decoded-content-length: "
                + (FIVE_GIB + 1) + "\r\nx-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER\r\n"));
        assertThat(chunked).startsWith("HTTP/1.1 400").contains("<Code>EntityTooLarge</Code>");
        // 5 GiB itself is S3's largest PUT: the daemon asks for the body
        assertThat(firstAnswer(put("/data/huge.bin", FIVE_GIB, ""))).startsWith("HTTP/1.1 100 Continue");
    }
}
