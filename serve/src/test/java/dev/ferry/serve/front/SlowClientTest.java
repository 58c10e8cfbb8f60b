package dev.ferry.serve.front;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonFixture;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code header-timeout}: a client that sends its headers a byte at a time loses the connection once the
 * timeout has passed since their first byte; an idle keep-alive connection and a slow body do not.
 * Raw sockets, a 500 ms timeout.
 */
class SlowClientTest {
    @TempDir
    static Path dir;
    static DaemonFixture ferry;

    @BeforeAll
    static void start() throws Exception {
        ferry = DaemonFixture.overFolder(dir).with("header-timeout", "500ms").start();
        Files.writeString(ferry.root.resolve("data/ok.txt"), "still here");
    }

    @AfterAll
    static void stop() {
        ferry.close();
    }

    private static void pause(long millis) throws InterruptedException {
        Thread.sleep(millis);
    }

    @Test
    void headers_sentAByteAtATime_loseTheConnection() throws Exception {
        byte[] request = "GET /data/ok.txt HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII);
        long start = System.nanoTime();
        boolean closed = false;
        try (Socket s = new Socket("127.0.0.1", ferry.daemon.port())) {
            s.setSoTimeout(100);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            for (int i = 0; i < 100 && !closed; i++) { // 100 bytes at 50 ms: 5 s, ten times the timeout
                try {
                    out.write(i < request.length ? request[i] : 'a');
                    out.flush();
                    pause(50);
                    closed = in.read() < 0;
                } catch (java.net.SocketTimeoutException stillOpen) {
                    // nothing to read: the daemon still holds the connection
                } catch (IOException reset) {
                    closed = true;
                }
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(closed).as("the daemon closed the connection").isTrue();
        assertThat(millis).as("closed soon after the 500 ms timeout").isBetween(400L, 3_000L);
    }

    @Test
    void anIdleKeepAliveConnection_andASlowBody_areNotCut() throws Exception {
        try (Socket s = new Socket("127.0.0.1", ferry.daemon.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write("GET /data/ok.txt HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(readAnswer(s.getInputStream())).startsWith("HTTP/1.1 200").endsWith("still here");
            pause(1_200); // idle between requests, past the header timeout
            out.write("PUT /data/slow.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            for (char c : "slow bytes".toCharArray()) { // the body over 1.5 s
                pause(150);
                out.write(c);
                out.flush();
            }
            assertThat(readAnswer(s.getInputStream())).startsWith("HTTP/1.1 200");
        }
        assertThat(Files.readString(ferry.root.resolve("data/slow.txt"))).isEqualTo("slow bytes");
    }

    /** One answer: headers, then Content-Length bytes of body. */
    private static String readAnswer(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed after " + head);
            }
            head.append((char) b);
        }
        int length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        return head + new String(in.readNBytes(length), StandardCharsets.UTF_8);
    }
}
