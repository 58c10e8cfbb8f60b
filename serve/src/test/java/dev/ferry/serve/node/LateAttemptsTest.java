package dev.ferry.serve.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.StoreCredentials;
import dev.ferry.time.Await;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;

/**
 * Write-back through a real proxy that holds an upload attempt past the daemon's patience and delivers it later
 * (twice, sometimes), after the retry succeeded and a newer write or a delete of the key was acknowledged: the store
 * ends with the newest acknowledged state, and the fence is not complete before it does (issue 44 item 1). And a
 * key the store refuses again and again fails alone, named, while the writes around it become durable (item 2).
 */
@ExtendWith(StoreCredentials.class)
class LateAttemptsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ROUNDS = 20;
    /** How long the proxy holds a first PUT of v1: past the retry, the newer write, and the newer write's own late attempt. */
    private static final long V1_HOLD_MS = 6000;
    private static final long NEWER_HOLD_MS = 1000;

    static byte[] bytes(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    static HttpResponse<String> flush(HttpClient http, DaemonFixture ferry, long timeoutMs) throws Exception {
        return http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=" + timeoutMs))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void twentyRounds_ofAWriteThenANewerWriteOrADelete_eachFirstAttemptHeld_endWithTheNewest(@TempDir Path dir) throws Exception {
        try (EmbeddedStore store = EmbeddedStore.start(dir.resolve("origin"), 0, CloudProfile.none());
                S3Client origin = DaemonFixture.sdk(store.endpoint(), "ferry", "ferry");
                ReorderingProxy proxy = new ReorderingProxy(new InetSocketAddress("127.0.0.1", store.endpoint().getPort()),
                        (method, path, before) -> {
                            if (!path.startsWith("/data/round-") || !(method.equals("PUT") || method.equals("DELETE"))) {
                                return ReorderingProxy.Plan.PASS;
                            }
                            int round = Integer.parseInt(path.substring("/data/round-".length()));
                            if (method.equals("PUT") && before == 0) { // v1's first attempt: back long after everything else
                                return round % 4 == 0 ? ReorderingProxy.Plan.holdAndDuplicate(V1_HOLD_MS) : ReorderingProxy.Plan.hold(V1_HOLD_MS);
                            }
                            // the newer write's (or the delete's) first attempt: back after its retry, before v1's
                            boolean newerFirst = method.equals("PUT") ? before == 2 : before == 0;
                            return newerFirst ? ReorderingProxy.Plan.hold(NEWER_HOLD_MS) : ReorderingProxy.Plan.PASS;
                        });
                DaemonFixture ferry = DaemonFixture.overUpstream(proxy.endpoint(), dir).with("write-back", true)
                        .with("first-byte-timeout", "500ms").with("write-settle-window", "7s").start(); // longer than any hold
                S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            origin.createBucket(b -> b.bucket("data"));
            for (int i = 0; i < ROUNDS; i++) {
                int round = i;
                var ack = s3.putObject(b -> b.bucket("data").key("round-" + round), RequestBody.fromBytes(bytes(20_000, round)));
                assertThat(ack.sdkHttpResponse().firstMatchingHeader("x-ferry-durability")).hasValue("local");
            }
            // v1's retry reached the store; its first attempt is still held by the proxy
            Await.until("every v1 in the store by its retry", Duration.ofSeconds(30), () -> {
                for (int i = 0; i < ROUNDS; i++) {
                    int round = i;
                    try {
                        origin.headObject(b -> b.bucket("data").key("round-" + round));
                    } catch (NoSuchKeyException e) {
                        return false;
                    }
                }
                return true;
            });
            assertThat(proxy.holding()).as("v1's first attempts, held").isGreaterThanOrEqualTo(ROUNDS);
            for (int i = 0; i < ROUNDS; i++) {
                int round = i;
                if (round % 2 == 0) {
                    s3.putObject(b -> b.bucket("data").key("round-" + round), RequestBody.fromBytes(bytes(30_000, 1000 + round)));
                } else {
                    s3.deleteObject(b -> b.bucket("data").key("round-" + round));
                }
            }
            HttpResponse<String> early = flush(http, ferry, 500);
            assertThat(early.statusCode()).as("a fence before the late attempts are past: " + early.body()).isEqualTo(504);

            HttpResponse<String> fence = flush(http, ferry, 60_000);
            assertThat(fence.statusCode()).as(fence.body()).isEqualTo(200);
            assertThat(proxy.holding()).as("every held attempt was delivered before the fence said complete").isZero();
            assertThat(proxy.deliveredLate()).isEqualTo(ROUNDS + ROUNDS / 4 + ROUNDS);
            for (int i = 0; i < ROUNDS; i++) {
                int round = i;
                if (round % 2 == 0) {
                    assertThat(origin.getObjectAsBytes(b -> b.bucket("data").key("round-" + round)).asByteArray()).as("round " + round)
                            .isEqualTo(bytes(30_000, 1000 + round));
                    assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("round-" + round)).asByteArray()).as("round " + round)
                            .isEqualTo(bytes(30_000, 1000 + round));
                } else {
                    assertThat(exists(origin, "round-" + round)).as("round " + round + " deleted in the store").isFalse();
                    assertThat(exists(s3, "round-" + round)).as("round " + round + " deleted through ferry").isFalse();
                }
            }
            JsonNode status = JSON.readTree(http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/status")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            assertThat(status.path("write_back").path("late_attempts_repaired").asLong()).as("late attempts found and repaired")
                    .isPositive();
            assertThat(status.path("write_back").path("settling").asLong()).isZero();
        }
    }

    private static boolean exists(S3Client s3, String key) {
        try {
            s3.headObject(b -> b.bucket("data").key(key));
            return true;
        } catch (NoSuchKeyException e) {
            return false;
        }
    }

    @Test
    void keysTheStoreRefusesAgainAndAgain_failAlone_namedByTheFenceAndStatus_whileTheOthersBecomeDurable(@TempDir Path dir)
            throws Exception {
        PrintStream err = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        try (EmbeddedStore store = EmbeddedStore.start(dir.resolve("origin"), 0, CloudProfile.none());
                S3Client origin = DaemonFixture.sdk(store.endpoint(), "ferry", "ferry");
                ReorderingProxy proxy = new ReorderingProxy(new InetSocketAddress("127.0.0.1", store.endpoint().getPort()),
                        (method, path, before) -> path.contains("poison") && method.equals("PUT") ? ReorderingProxy.Plan.refuse()
                                : ReorderingProxy.Plan.PASS);
                DaemonFixture ferry = DaemonFixture.overUpstream(proxy.endpoint(), dir).with("write-back", true).start();
                S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            origin.createBucket(b -> b.bucket("data"));
            System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
            List<String> poison = new ArrayList<>();
            for (int i = 0; i < 104; i++) {
                String key = i % 26 == 13 ? "poison-" + i : "good-" + i;
                if (key.startsWith("poison")) {
                    poison.add(key);
                }
                int seed = i;
                s3.putObject(b -> b.bucket("data").key(key), RequestBody.fromBytes(bytes(5_000, seed)));
            }
            assertThat(poison).hasSize(4);
            HttpResponse<String> fence = flush(http, ferry, 120_000);
            System.setErr(err);
            assertThat(fence.statusCode()).as(fence.body()).isEqualTo(502);
            JsonNode answer = JSON.readTree(fence.body());
            List<String> failed = new ArrayList<>();
            for (JsonNode w : answer.path("writes")) { // the writes not yet durable when the fence began
                if (w.path("durability").asText().equals("failed")) {
                    failed.add(w.path("key").asText());
                    assertThat(w.path("error").asText()).contains("InternalError").contains("File name too long");
                } else {
                    assertThat(w.path("durability").asText()).as(w.toString()).isEqualTo("durable");
                }
            }
            assertThat(failed).containsExactlyInAnyOrderElementsOf(poison);
            assertThat(answer.path("first_error").asText()).contains("poison-");
            for (int i = 0; i < 104; i++) {
                if (i % 26 != 13) {
                    int seed = i;
                    assertThat(origin.getObjectAsBytes(b -> b.bucket("data").key("good-" + seed)).asByteArray()).isEqualTo(bytes(5_000, seed));
                }
            }
            JsonNode status = JSON.readTree(http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/status")).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).path("write_back");
            assertThat(status.path("failed").asLong()).isEqualTo(4);
            assertThat(status.path("first_failure").asText()).contains("poison-").contains("File name too long");
            // the failed writes are kept and served
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key(poison.getFirst())).asByteArray())
                    .isEqualTo(bytes(5_000, Integer.parseInt(poison.getFirst().substring("poison-".length()))));
            String[] lines = log.toString(StandardCharsets.UTF_8).split("\n");
            assertThat(lines.length).as("log lines while 4 keys were refused:%n%s", log).isLessThan(100);
            assertThat(log.toString(StandardCharsets.UTF_8)).contains("reported failed").doesNotContain("\tat ");
            assertThat(proxy.refused()).as("each poison key tried a bounded number of times").isBetween(4 * 8, 4 * 8 * 2);
        } finally {
            System.setErr(err);
        }
    }
}
