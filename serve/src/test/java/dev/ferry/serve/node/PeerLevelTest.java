package dev.ferry.serve.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.serve.Daemon;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.time.Await;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code peer} durability level between two real write-back daemons of a static group over one folder store: a
 * PUT asked {@code peer} is answered {@code peer} with the member holding the copy, the member keeps it until the
 * writer's upload is durable and then lets it go; a daemon in no group answers {@code local} and says why; a level
 * that does not exist is a 400. (The writer killed with its disk gone: clients/python/tests/test_checkpoint.py.)
 */
class PeerLevelTest {
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** A writer and its peer, the other member of their static group of two over one folder store; closed together. */
    record Pair(Daemon writer, Daemon peer, String peerUrl) implements AutoCloseable {
        @Override
        public void close() {
            writer.close();
            peer.close();
        }
    }

    /** Starts a {@link Pair} of write-back daemons; with {@code writerReachesStore} false, nothing answers the writer's store. */
    Pair pair(boolean writerReachesStore) throws Exception {
        Files.createDirectories(dir.resolve("store/data"));
        int a = freePort();
        int b = freePort();
        String group = "http://127.0.0.1:" + a + ",http://127.0.0.1:" + b;
        DaemonFixture.Builder writer = writerReachesStore ? DaemonFixture.overFolder(dir)
                : DaemonFixture.overUpstream(java.net.URI.create("http://127.0.0.1:" + freePort()), dir);
        Daemon first = member(writer, 0, group, a);
        try {
            return new Pair(first, member(DaemonFixture.overFolder(dir), 1, group, b), "http://127.0.0.1:" + b);
        } catch (Exception | Error e) {
            first.close();
            throw e;
        }
    }

    Daemon member(DaemonFixture.Builder builder, int i, String group, int port) throws Exception {
        return builder.with("cache-dir", dir.resolve("cache-" + i)).with("write-back", true).with("group", group)
                .with("port", Integer.toString(port)).with("prefetch-bytes", 0).start().daemon;
    }

    static HttpResponse<String> flush(Daemon d, int timeoutMs) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(d.endpoint().resolve("/_ferry/v1/flush?timeout_ms=" + timeoutMs))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static HttpResponse<String> put(Daemon d, String key, byte[] body, String level) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(d.endpoint().resolve("/data/" + key)).header("x-ferry-durability", level)
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode writeBack(Daemon d) throws Exception {
        return JSON.readTree(HTTP.send(HttpRequest.newBuilder(d.endpoint().resolve("/_ferry/v1/status")).build(),
                HttpResponse.BodyHandlers.ofString()).body()).path("write_back");
    }

    @Test
    void aPeerWrite_isCopiedToTheNextMember_andTheCopyGoesOnceTheUploadIsDurable() throws Exception {
        try (Pair p = pair(true)) {
            byte[] bytes = new byte[3 << 20];
            new Random(5).nextBytes(bytes);
            HttpResponse<String> r = put(p.writer(), "ckpt/step-1/__0_0.distcp", bytes, "peer");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-ferry-durability")).hasValue("peer");
            assertThat(r.headers().firstValue("x-ferry-peer")).hasValue(p.peerUrl());
            HttpResponse<String> fence = flush(p.writer(), 30000);
            assertThat(fence.statusCode()).as(fence.body()).isEqualTo(200);
            assertThat(Files.readAllBytes(dir.resolve("store/data/ckpt/step-1/__0_0.distcp"))).isEqualTo(bytes);
            Await.until("the peer lets its copy go", Duration.ofSeconds(30), () -> writeBack(p.peer()).path("peer_copies").asLong() == 0);
            assertThat(writeBack(p.peer()).path("peer_copy_bytes").asLong()).isZero();
        }
    }

    @Test
    void theFenceAndTheStatus_sayWhichWritesAreOnAPeer_whileTheStoreCannotBeReached() throws Exception {
        try (Pair p = pair(false)) { // the writer's store does not answer: its write stays on the two disks
            HttpResponse<String> r = put(p.writer(), "ckpt/step-2/__0_0.distcp", new byte[100_000], "peer");
            assertThat(r.headers().firstValue("x-ferry-durability")).as(r.body()).hasValue("peer");
            HttpResponse<String> fence = flush(p.writer(), 300);
            assertThat(fence.statusCode()).isNotEqualTo(200);
            JsonNode write = JSON.readTree(fence.body()).path("writes").get(0);
            assertThat(write.path("durability").asText()).isEqualTo("peer");
            assertThat(write.path("peer").asText()).isEqualTo(p.peerUrl());
            assertThat(writeBack(p.writer()).path("on_peers").asLong()).isEqualTo(1);
            assertThat(writeBack(p.peer()).path("peer_copies").asLong()).isEqualTo(1);
        }
    }

    @Test
    void aDaemonInNoGroup_answersLocalAndWhy_andAnUnknownLevelIsRefused() throws Exception {
        Files.createDirectories(dir.resolve("store/data"));
        try (DaemonFixture alone = DaemonFixture.overFolder(dir).with("cache-dir", dir.resolve("cache")).with("write-back", true).start()) {
            HttpResponse<String> r = put(alone.daemon, "k", "bytes".getBytes(), "peer");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-ferry-durability")).hasValue("local");
            assertThat(r.headers().firstValue("x-ferry-peer-error")).hasValueSatisfying(why -> assertThat(why).contains("no group"));
            HttpResponse<String> odd = put(alone.daemon, "k", "bytes".getBytes(), "twice");
            assertThat(odd.statusCode()).isEqualTo(400);
            assertThat(odd.body()).contains("x-ferry-durability is local, peer or durable, not twice");
        }
    }
}
