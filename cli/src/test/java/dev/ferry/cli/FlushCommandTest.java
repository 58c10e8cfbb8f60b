package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.Daemon;
import dev.ferry.serve.ServeConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ferry flush} against real daemons: the fence after a write-back PUT, a daemon without write-back, no daemon. */
class FlushCommandTest {
    /** Runs {@code ferry args} and returns its exit code and what it printed on standard output and error. */
    private static MainTest.Run flush(String... args) {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        PrintStream old = System.out;
        System.setOut(new PrintStream(buffer, true));
        try {
            MainTest.Run r = MainTest.run(args);
            return new MainTest.Run(r.exit(), r.out() + buffer, r.err());
        } finally {
            System.setOut(old);
        }
    }

    @Test
    void afterAWriteBackPut_returnsOnceItIsInTheStore(@TempDir Path dir) throws Exception {
        ServeConfig config = ServeConfig.defaults().with(Map.of("data-dir", dir.resolve("upstream").toString(), "profile", "none",
                "cache-dir", dir.resolve("cache").toString(), "port", "0", "write-back", "true"));
        try (Daemon daemon = Daemon.start(config); HttpClient http = HttpClient.newHttpClient()) {
            URI endpoint = daemon.endpoint();
            assertThat(http.send(HttpRequest.newBuilder(endpoint.resolve("/ckpt")).PUT(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
            HttpResponse<String> put = http.send(HttpRequest.newBuilder(endpoint.resolve("/ckpt/step-1.pt"))
                    .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[1 << 20])).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
            MainTest.Run r = flush("flush", "--url", endpoint.toString(), "--timeout", "60s");
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("ferry flush: every write acknowledged before the fence is in the object store");
            assertThat(dir.resolve("upstream/ckpt/step-1.pt")).as("in the store's folder").hasSize(1 << 20);
        }
    }

    @Test
    void aDaemonWithoutWriteBack_hasNothingToFlush(@TempDir Path dir) throws Exception {
        ServeConfig config = ServeConfig.defaults().with(Map.of("store-root", dir.resolve("store").toString(), "cache-dir",
                dir.resolve("cache").toString(), "port", "0"));
        try (Daemon daemon = Daemon.start(config)) {
            MainTest.Run r = flush("flush", "--url", daemon.endpoint().toString());
            assertThat(r.exit()).isZero();
            assertThat(r.out()).contains("has no write-back");
        }
    }

    @Test
    void noDaemon_isOneSentence_exit1() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        MainTest.Run r = flush("flush", "--url", "http://127.0.0.1:" + port + "/");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err().strip()).isEqualTo("ferry: no ferry daemon answers at http://127.0.0.1:" + port + ": nothing to flush there.");
        assertThat(flush("flush", "--url", "127.0.0.1:9099").err()).contains("--url must look like http://host:port");
        assertThat(flush("flush", "--timeout", "soon").err()).contains("--timeout must be a duration");
    }
}
