package dev.ferry.serve.node;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.StoreCredentials;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * An origin that accepts connections and never answers: the daemon answers a miss with 503 once
 * first-byte-timeout has passed (retries included), and keeps serving what it has on disk meanwhile. Writes
 * without write-back (PUT, DELETE) are bounded the same way (issue 20 item 7): a PUT by the time the origin
 * goes without taking a byte or answering.
 */
@ExtendWith(StoreCredentials.class)
class FirstByteTimeoutTest {
    private static DaemonFixture daemon(Path dir, URI upstream, String timeout) throws Exception {
        return DaemonFixture.overUpstream(upstream, dir).with("cache-size", "64MiB").with("first-byte-timeout", timeout).start();
    }

    private static HttpRequest get(DaemonFixture d, String path) {
        return HttpRequest.newBuilder(d.endpoint().resolve(path)).timeout(Duration.ofSeconds(25)).build();
    }

    @Test
    void anOriginThatNeverAnswers_gets503_afterTheTimeout(@TempDir Path dir) throws Exception {
        try (StallingRelay silent = new StallingRelay(null); DaemonFixture ferry = daemon(dir, silent.endpoint(), "1s");
                HttpClient http = HttpClient.newHttpClient()) {
            long t0 = System.nanoTime();
            HttpResponse<String> r = http.send(get(ferry, "/data/shard.tar"), HttpResponse.BodyHandlers.ofString());
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
            assertThat(r.body()).contains("<Code>ServiceUnavailable</Code>").contains("first-byte timeout");
            assertThat(seconds).as("seconds to the answer").isBetween(0.9, 5.0);
        }
    }

    @Test
    void cacheHits_areServed_whileAMissWaitsOnAHungOrigin(@TempDir Path dir) throws Exception {
        byte[] hot = new byte[300_000];
        new Random(5).nextBytes(hot);
        try (EmbeddedStore store = EmbeddedStore.start(dir.resolve("origin"), 0, CloudProfile.none());
                S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(store.endpoint(), "ferry", "ferry"));
                StallingRelay relay = new StallingRelay(new InetSocketAddress("127.0.0.1", store.endpoint().getPort()));
                DaemonFixture ferry = daemon(dir, relay.endpoint(), "3s");
                HttpClient http = HttpClient.newHttpClient()) {
            s3.createBucket("data");
            s3.put(ObjectKey.of("data", "hot.tar"), PutBody.ofBytes(hot));
            s3.put(ObjectKey.of("data", "cold.tar"), PutBody.ofBytes(new byte[1000]));
            assertThat(http.send(get(ferry, "/data/hot.tar"), HttpResponse.BodyHandlers.ofByteArray()).body()).isEqualTo(hot);

            relay.stall();
            long t0 = System.nanoTime();
            CompletableFuture<HttpResponse<String>> miss = http.sendAsync(get(ferry, "/data/cold.tar"), HttpResponse.BodyHandlers.ofString());
            HttpResponse<byte[]> hit = http.send(get(ferry, "/data/hot.tar"), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(hit.statusCode()).isEqualTo(200);
            assertThat(hit.body()).isEqualTo(hot);
            assertThat(miss).as("the miss still waits on the origin when the hit is served").isNotDone();

            HttpResponse<String> answer = miss.get();
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
            assertThat(seconds).as("seconds to the miss's answer").isBetween(2.9, 8.0);
        }
    }

    @Test
    void writesToAnOriginThatNeverAnswers_get503_afterTheTimeout(@TempDir Path dir) throws Exception {
        try (StallingRelay silent = new StallingRelay(null); DaemonFixture ferry = daemon(dir, silent.endpoint(), "1s");
                HttpClient http = HttpClient.newHttpClient()) {
            // 8 MiB: more than the sockets' buffers hold, so the origin stops taking the body before it would answer
            for (HttpRequest write : new HttpRequest[] {
                    HttpRequest.newBuilder(ferry.endpoint().resolve("/data/written.tar")).timeout(Duration.ofSeconds(25))
                            .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[8 << 20])).build(),
                    HttpRequest.newBuilder(ferry.endpoint().resolve("/data/small.txt")).timeout(Duration.ofSeconds(25))
                            .PUT(HttpRequest.BodyPublishers.ofString("hello")).build(),
                    HttpRequest.newBuilder(ferry.endpoint().resolve("/data/gone.tar")).timeout(Duration.ofSeconds(25)).DELETE().build()}) {
                long t0 = System.nanoTime();
                HttpResponse<String> r = http.send(write, HttpResponse.BodyHandlers.ofString());
                double seconds = (System.nanoTime() - t0) / 1e9;
                assertThat(r.statusCode()).as(write.method() + " " + r.body()).isEqualTo(503);
                assertThat(r.body()).contains("<Code>ServiceUnavailable</Code>").contains("first-byte timeout");
                assertThat(seconds).as("seconds to the answer of " + write.method() + " " + write.uri()).isBetween(0.9, 5.0);
            }
        }
    }

    @Test
    void aGetAfterALocallyAcknowledgedDelete_is404_whileTheOriginHangs(@TempDir Path dir) throws Exception {
        try (EmbeddedStore store = EmbeddedStore.start(dir.resolve("origin"), 0, CloudProfile.none());
                S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(store.endpoint(), "ferry", "ferry"));
                StallingRelay relay = new StallingRelay(new InetSocketAddress("127.0.0.1", store.endpoint().getPort()));
                DaemonFixture ferry = DaemonFixture.overUpstream(relay.endpoint(), dir).with("write-back", true)
                        .with("first-byte-timeout", "1s").start();
                HttpClient http = HttpClient.newHttpClient()) {
            s3.createBucket("data");
            relay.stall();
            HttpResponse<String> put = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/data/ckpt.bin"))
                    .PUT(HttpRequest.BodyPublishers.ofString("kept locally")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
            HttpResponse<String> delete = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/data/ckpt.bin")).DELETE().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(delete.statusCode()).isEqualTo(204);
            assertThat(delete.headers().firstValue("x-ferry-durability")).hasValue("local");
            // answered from what the daemon knows: asking the hung store would be a 503 after the first-byte timeout
            HttpResponse<String> get = http.send(get(ferry, "/data/ckpt.bin"), HttpResponse.BodyHandlers.ofString());
            assertThat(get.statusCode()).as(get.body()).isEqualTo(404);
            assertThat(get.body()).contains("<Code>NoSuchKey</Code>");
        }
    }

    @Test
    void aBodyThatStallsMidway_endsTheAnswerEarly_withinTheReadStallTimeout(@TempDir Path dir) throws Exception {
        byte[] big = new byte[6 << 20];
        new Random(9).nextBytes(big);
        try (EmbeddedStore store = EmbeddedStore.start(dir.resolve("origin"), 0, CloudProfile.none());
                S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(store.endpoint(), "ferry", "ferry"));
                StallingRelay relay = new StallingRelay(new InetSocketAddress("127.0.0.1", store.endpoint().getPort()));
                DaemonFixture ferry = DaemonFixture.overUpstream(relay.endpoint(), dir).with("cache-size", "64MiB")
                        .with("first-byte-timeout", "5s").with("read-stall-timeout", "4s").start();
                HttpClient http = HttpClient.newHttpClient()) {
            s3.createBucket("data");
            s3.put(ObjectKey.of("data", "stalls.bin"), PutBody.ofBytes(big));
            relay.stallAnswersAfter(200_000); // every answer from the store stops after its first 200 KB
            long t0 = System.nanoTime();
            Throwable failure = null;
            int status = 0;
            try {
                HttpResponse<byte[]> r = http.send(get(ferry, "/data/stalls.bin"), HttpResponse.BodyHandlers.ofByteArray());
                status = r.statusCode();
                assertThat(r.body()).as("no answer may claim the whole object").isNotEqualTo(big);
            } catch (java.io.IOException e) {
                failure = e; // the answer ended before its Content-Length: what the client sees
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertThat(failure != null || status >= 500).as("the read failed (status %d)", status).isTrue();
            // each attempt waits half the budget for a byte; the read gives up once the budget is spent, not after
            // retries of 30 s each (179 s before read-stall-timeout)
            assertThat(seconds).as("seconds until the client saw the read fail").isLessThan(25);
        }
    }
}
