package dev.ferry.serve.front;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonChildMain;
import dev.ferry.serve.RawHttp;
import dev.ferry.time.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20, item 2: clients that GET uncached objects and never read. The daemon runs in a JVM of its own with a
 * small heap ({@value #HEAP}; before the fix each such reader held its whole run of blocks and a part read ahead,
 * 24 MiB here, 480 MiB for all, and the heap ran out in the fetcher, then {@code BlockRuns.claimRun}). {@value #READERS} raw
 * sockets with a 4 KiB receive buffer each GET a different uncached 16 MiB object and stop reading once the answer
 * has started. Meanwhile another client reads every one of those objects, whole and right (before the fix it
 * waited forever on the stalled reader that was fetching the block), and the daemon's live heap grows by less than
 * {@value #HEAP_PER_READER} bytes per stalled reader. Then the stalled clients read, and get every byte right.
 * Nothing is timed: socket timeouts only turn a hang into a failure.
 */
class StalledReaderMemoryTest {
    static final String HEAP = "-Xmx192m";
    static final int READERS = 20;
    static final int SIZE = 16 << 20;
    static final long HEAP_PER_READER = 1 << 20;
    static final int TIMEOUT_MS = 120_000;

    @TempDir
    Path dir;

    static byte[] content(int i) {
        byte[] b = new byte[SIZE];
        new Random(1000 + i).nextBytes(b);
        return b;
    }

    static String sha256(byte[] b) throws java.security.NoSuchAlgorithmException {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(b));
    }

    @Test
    void stalledReaders_ofUncachedObjects_holdBoundedMemory_andHoldBackNoOtherReader() throws Exception {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), HEAP,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
                DaemonChildMain.class.getName(), "data-dir=" + dir.resolve("upstream"), "cache-dir=" + dir.resolve("cache"), "profile=none",
                "cache-size=2GiB", "block-size=1MiB");
        Process child = new ProcessBuilder(command).redirectError(dir.resolve("daemon.log").toFile()).start();
        PrintWriter toChild = new PrintWriter(child.getOutputStream(), true, StandardCharsets.US_ASCII);
        BufferedReader fromChild = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.US_ASCII));
        List<Socket> stalled = new ArrayList<>();
        try {
            int port = Integer.parseInt(awaitLine(fromChild, "port ", child).substring(5));
            assertThat(RawHttp.exchange(port, "PUT /data HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").status())
                    .isEqualTo(200);
            List<String> digests = new ArrayList<>();
            for (int i = 0; i < READERS; i++) {
                byte[] c = content(i);
                put(port, "data/obj-" + i, c);
                digests.add(sha256(c));
            }
            long[] before = heap(toChild, fromChild, child);

            for (int i = 0; i < READERS; i++) {
                Socket s = new Socket();
                s.setReceiveBufferSize(4096);
                s.connect(new InetSocketAddress("127.0.0.1", port));
                s.setSoTimeout(TIMEOUT_MS);
                stalled.add(s);
                s.getOutputStream().write(("GET /data/obj-" + i + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
            }
            for (Socket s : stalled) { // each answer has started: its reader has claimed the object's blocks, and stops here
                awaitBytes(s);
            }

            for (int i = 0; i < READERS; i++) {
                assertThat(sha256(get(port, "data/obj-" + i))).as("another reader's bytes of obj-%d, read while its first reader stalls", i)
                        .isEqualTo(digests.get(i));
            }
            long[] during = heap(toChild, fromChild, child);
            System.out.printf("daemon (%s) with %d stalled readers of 16 MiB objects: live heap %.1f -> %.1f MiB, RSS %.1f -> %.1f MiB%n",
                    HEAP, READERS, before[0] / 1048576.0, during[0] / 1048576.0, before[1] / 1048576.0, during[1] / 1048576.0);
            assertThat(during[0] - before[0]).as("live heap held for %d stalled readers", READERS)
                    .isLessThan(READERS * HEAP_PER_READER);

            for (int i = 0; i < READERS; i++) {
                assertThat(sha256(readAnswer(stalled.get(i).getInputStream()))).as("the stalled reader's bytes of obj-%d, once it reads", i)
                        .isEqualTo(digests.get(i));
            }
            assertThat(child.isAlive()).isTrue();
        } finally {
            for (Socket s : stalled) {
                s.close();
            }
            toChild.println("exit");
            if (!child.waitFor(30, TimeUnit.SECONDS)) {
                child.destroyForcibly().waitFor();
            }
        }
    }

    private static String awaitLine(BufferedReader from, String prefix, Process child) throws IOException {
        for (String line = from.readLine(); line != null; line = from.readLine()) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        throw new AssertionError("the daemon's JVM ended (exit " + child.onExit().join().exitValue() + ") before '" + prefix + "'");
    }

    /** The daemon's live heap after a full collection, and its resident set, in bytes. */
    private static long[] heap(PrintWriter to, BufferedReader from, Process child) throws IOException {
        to.println("heap");
        String[] f = awaitLine(from, "heap ", child).split(" ");
        return new long[] {Long.parseLong(f[1]), Long.parseLong(f[3])};
    }

    private static void awaitBytes(Socket s) throws InterruptedException {
        Await.until("an answer started for a stalled reader", Duration.ofMillis(TIMEOUT_MS), () -> s.getInputStream().available() > 0);
    }

    private static void put(int port, String path, byte[] body) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(TIMEOUT_MS);
            OutputStream out = s.getOutputStream();
            out.write(("PUT /" + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: "
                    + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            String head = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            assertThat(head).as("PUT /%s", path).isEqualTo("HTTP/1.1 200");
        }
    }

    private static byte[] get(int port, String path) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(TIMEOUT_MS);
            s.getOutputStream().write(("GET /" + path + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return readAnswer(s.getInputStream());
        }
    }

    /** A 200 answer's body (Content-Length bytes). */
    private static byte[] readAnswer(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (head.indexOf("\r\n\r\n") < 0) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed after " + head);
            }
            head.append((char) b);
        }
        assertThat(head.toString()).startsWith("HTTP/1.1 200");
        long length = -1;
        for (String line : head.toString().split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Long.parseLong(line.substring(15).trim());
            }
        }
        assertThat(length).isEqualTo(SIZE);
        byte[] body = in.readNBytes((int) length);
        assertThat(body.length).as("body bytes").isEqualTo(SIZE);
        return body;
    }
}
