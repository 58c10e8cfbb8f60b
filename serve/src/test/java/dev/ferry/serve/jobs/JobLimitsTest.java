package dev.ferry.serve.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.Shard;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.ObjectKey;
import dev.ferry.time.Await;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A registration that would cost the daemon its heap is refused at once, with the bound it passed; others go on. */
class JobLimitsTest {
    static HttpResponse<String> register(HttpClient http, URI api, Path dir, String job, Shard shard) throws Exception {
        Path file = dir.resolve(job + ".json");
        ManifestJson.write(new Manifest(List.of(shard)), "test", file);
        String body = "{\"job\":\"" + job + "\",\"manifest\":" + Files.readString(file) + ",\"batch_size\":1}";
        return http.send(HttpRequest.newBuilder(api.resolve("jobs")).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aTenTerabyteShardOrTwoBillionSamples_areRefused_andTheDaemonServesOn(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).start();
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            HttpResponse<String> huge = register(http, api, dir, "huge", new Shard(ObjectKey.of("data", "big.tar"), 10_000_000_000_000L, "e", 1));
            HttpResponse<String> many = register(http, api, dir, "many", new Shard(ObjectKey.of("data", "s.tar"), 1 << 20, "e", 2_000_000_000));
            assertThat(huge.statusCode()).isEqualTo(400);
            assertThat(huge.body()).contains("block reads").contains("a job may plan at most 2,097,152");
            assertThat(many.statusCode()).isEqualTo(400);
            assertThat(many.body()).contains("more than 2,097,152 samples per epoch");
            assertThat(ferry.daemon.jobs().jobs()).as("refused before any plan is built").isEmpty();
            Files.write(ferry.root.resolve("data/ok.bin"), new byte[4096]);
            String etag = ferry.daemon.node().stack().cache().head(ObjectKey.of("data", "ok.bin")).etag();
            HttpResponse<String> ok = register(http, api, dir, "ok", new Shard(ObjectKey.of("data", "ok.bin"), 4096, etag, 4));
            assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
            assertThat(http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/data/ok.bin")).build(),
                    HttpResponse.BodyHandlers.ofByteArray()).body()).hasSize(4096);
        }
    }

    @Test
    void aRegistrationWhoseClientLeaves_stopsAndRegistersNothing(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).start();
                HttpClient http = HttpClient.newHttpClient()) {
            // 2,000,000 samples in 2,000 shards: within the limits, seconds of planning on any machine
            StringBuilder shards = new StringBuilder();
            for (int i = 0; i < 2000; i++) {
                shards.append(i == 0 ? "" : ",").append("{\"bucket\":\"data\",\"key\":\"s").append(i)
                        .append(".tar\",\"size\":1048576,\"etag\":\"e\",\"samples\":1000}");
            }
            byte[] body = ("{\"job\":\"left\",\"manifest\":{\"format\":\"ferry-manifest/1\",\"shards\":[" + shards + "]}}")
                    .getBytes(StandardCharsets.UTF_8);
            try (Socket s = new Socket("127.0.0.1", ferry.daemon.port())) {
                s.getOutputStream().write(("POST /_ferry/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                        + body.length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                s.getOutputStream().write(body);
                s.getOutputStream().flush();
                Await.until("the daemon planning the registration", Duration.ofMinutes(1), () -> ferry.daemon.jobs().registering());
            }
            // the registration notices at its next step and ends as a client error (499), never registered
            Await.until("the abandoned registration's end", Duration.ofMinutes(5), () -> ferry.stats().clientErrors() > 0);
            assertThat(ferry.stats().clientErrors()).as("the abandoned registration ended").isEqualTo(1);
            assertThat(ferry.daemon.jobs().jobs()).as("nothing of it took effect").isEmpty();
            Files.write(ferry.root.resolve("data/ok.bin"), new byte[4096]);
            String etag = ferry.daemon.node().stack().cache().head(ObjectKey.of("data", "ok.bin")).etag();
            HttpResponse<String> ok = register(http, ferry.endpoint().resolve("/_ferry/v1/"), dir, "ok",
                    new Shard(ObjectKey.of("data", "ok.bin"), 4096, etag, 4));
            assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
            assertThat(ferry.daemon.jobs().jobs()).containsOnlyKeys("ok");
        }
    }
}
