package dev.ferry.s3client;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A GET closed with much of its body unread drops its connection rather than read the rest: measured at the
 * server (a real HTTP server on loopback, which counts what it managed to send before the client went away).
 */
class AbortingStreamTest {
    private static final int BODY = 64 << 20;
    private static final byte[] CHUNK = new byte[64 << 10];

    private HttpServer server;
    private S3ObjectStore s3;
    private volatile CompletableFuture<Long> sent;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            CompletableFuture<Long> done = sent;
            long written = 0;
            try {
                exchange.getResponseHeaders().set("ETag", "\"0123456789abcdef0123456789abcdef\"");
                exchange.getResponseHeaders().set("Last-Modified", "Thu, 03 Dec 2026 10:00:00 GMT");
                exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
                exchange.sendResponseHeaders(200, BODY);
                try (OutputStream out = exchange.getResponseBody()) {
                    while (written < BODY) {
                        out.write(CHUNK);
                        written += CHUNK.length;
                    }
                }
            } catch (IOException clientWentAway) {
                // what was written before the connection broke is the count
            } finally {
                done.complete(written);
                exchange.close();
            }
        });
        server.start();
        URI endpoint = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
        s3 = new S3ObjectStore(S3StoreConfig.endpoint(endpoint, "a", "b"));
    }

    @AfterEach
    void stop() throws IOException {
        s3.close();
        server.stop(0);
    }

    private long sentAfterReading(long bytes) throws Exception {
        sent = new CompletableFuture<>();
        try (ObjectContent c = s3.get(new GetRequest(ObjectKey.of("data", "big.bin"), null, null, true))) {
            assertThat(c.range()).isEqualTo(ByteRange.of(0, BODY));
            assertThat(c.stream().readNBytes((int) bytes)).hasSize((int) bytes);
        }
        return sent.get(30, TimeUnit.SECONDS);
    }

    @Test
    void closedEarly_theRestIsNotRead() throws Exception {
        long sentBytes = sentAfterReading(4 << 20);
        // socket buffers on both sides hold a few MiB at most; draining would have sent all 64
        assertThat(sentBytes).as("bytes the server sent").isLessThan(BODY / 2);
    }

    @Test
    void closedWithLittleLeft_drainsIt_andReadToTheEnd_sendsAll() throws Exception {
        assertThat(sentAfterReading(BODY - AbortingStream.DRAIN_AT_MOST / 2)).isEqualTo(BODY);
        assertThat(sentAfterReading(BODY)).isEqualTo(BODY);
    }
}
