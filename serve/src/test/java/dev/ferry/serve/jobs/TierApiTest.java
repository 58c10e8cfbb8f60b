package dev.ferry.serve.jobs;

import static dev.ferry.serve.ApiHttp.JSON;
import static dev.ferry.serve.ApiHttp.get;
import static dev.ferry.serve.ApiHttp.getOk;
import static dev.ferry.serve.ApiHttp.post;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.time.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Warming the local tier and seeing and dropping what it holds, through a daemon over the embedded store: a prefix
 * warmed is fetched once (the store's egress is the prefix), a second warm fetches nothing, the listing shows it by
 * folder and object, a drop removes exactly the prefix, a warm that does not fit stops at the tier, and bad requests
 * get one sentence and a 4xx.
 */
class TierApiTest {
    private static final int OBJECTS = 40;
    private static final int SIZE = 100_000;

    private static JsonNode warm(HttpClient http, URI api, String body) throws Exception {
        HttpResponse<String> started = post(http, api.resolve("warm"), body);
        assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
        String id = JSON.readTree(started.body()).get("id").asText();
        JsonNode[] last = new JsonNode[1];
        Await.until("warm " + id + " done", Duration.ofSeconds(60), () -> {
            last[0] = getOk(http, api.resolve("warm/" + id));
            return last[0].get("state").asText().equals("done") || last[0].get("state").asText().equals("failed");
        });
        return last[0];
    }

    private static long egress(HttpClient http, URI api) throws Exception {
        return getOk(http, api.resolve("status")).get("tiers").get("origin").get("egress_bytes").asLong();
    }

    @Test
    void aPrefixIsWarmedOnce_listedByFolder_andDropped(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("cache-size", "64MiB").with("block-size", "1MiB").start();
                S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            s3.createBucket(b -> b.bucket("data"));
            Random random = new Random(5);
            for (int i = 0; i < OBJECTS; i++) {
                byte[] bytes = new byte[SIZE];
                random.nextBytes(bytes);
                String key = (i < OBJECTS / 2 ? "train/a/" : "train/b/") + i + ".bin";
                s3.putObject(b -> b.bucket("data").key(key), RequestBody.fromBytes(bytes));
            }
            // what the PUTs left in the tier goes first: the warm must fetch it all
            HttpResponse<String> cleared = http.send(HttpRequest.newBuilder(api.resolve("cache?bucket=data")).DELETE().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(cleared.statusCode()).as(cleared.body()).isEqualTo(200);

            long before = egress(http, api);
            JsonNode done = warm(http, api, "{\"bucket\":\"data\",\"prefix\":\"train/\"}");
            assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("done");
            assertThat(done.get("objects_done").asLong()).isEqualTo(OBJECTS);
            assertThat(done.get("bytes_done").asLong()).isEqualTo((long) OBJECTS * SIZE);
            assertThat(done.get("bytes_fetched").asLong()).isEqualTo((long) OBJECTS * SIZE);
            long egress = egress(http, api) - before;
            assertThat((double) egress).as("the prefix left the store once").isBetween(OBJECTS * SIZE * 1.0, OBJECTS * SIZE * 1.02);

            JsonNode again = warm(http, api, "{\"bucket\":\"data\",\"prefix\":\"train/\"}");
            assertThat(again.get("bytes_fetched").asLong()).as("a second warm fetches nothing").isZero();
            assertThat(egress(http, api) - before).isEqualTo(egress);

            JsonNode top = getOk(http, api.resolve("cache"));
            assertThat(top.get("entries")).hasSize(1);
            assertThat(top.get("entries").get(0).get("bucket").asText()).isEqualTo("data");
            assertThat(top.get("entries").get(0).get("bytes").asLong()).isEqualTo((long) OBJECTS * SIZE);
            JsonNode folders = getOk(http, api.resolve("cache?bucket=data&prefix=train/"));
            assertThat(folders.get("entries")).extracting(e -> e.get("prefix").asText()).containsExactly("train/a/", "train/b/");
            assertThat(folders.get("entries").get(0).get("objects").asLong()).isEqualTo(OBJECTS / 2);
            assertThat(folders.get("entries").get(0).get("idle_s").asDouble()).isGreaterThanOrEqualTo(0);

            HttpResponse<String> drop = http.send(HttpRequest.newBuilder(api.resolve("cache?bucket=data&prefix=train/a/")).DELETE().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(drop.statusCode()).as(drop.body()).isEqualTo(200);
            assertThat(JSON.readTree(drop.body()).get("dropped_bytes").asLong()).isEqualTo((long) OBJECTS / 2 * SIZE);
            assertThat(getOk(http, api.resolve("cache?bucket=data&prefix=train/")).get("entries"))
                    .extracting(e -> e.get("prefix").asText()).containsExactly("train/b/");
            // what was dropped reads as before, from the store
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("train/a/0.bin")).asByteArray()).hasSize(SIZE);
        }
    }

    @Test
    void aWarmLargerThanTheTier_stopsAtItsCapacity_andSaysWhatDidNotFit(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("cache-size", "2MiB").with("block-size", "256KiB").start();
                S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            s3.createBucket(b -> b.bucket("data"));
            for (int i = 0; i < 40; i++) {
                int n = i;
                s3.putObject(b -> b.bucket("data").key("big/" + n), RequestBody.fromBytes(new byte[SIZE]));
            }
            JsonNode done = warm(http, api, "{\"bucket\":\"data\",\"prefix\":\"big/\"}");
            assertThat(done.get("state").asText()).isEqualTo("done");
            long fits = (long) (2 * 1024 * 1024 * 0.9) / SIZE;
            assertThat(done.get("objects_done").asLong()).isEqualTo(fits);
            assertThat(done.get("objects_not_fitting").asLong()).isEqualTo(40 - fits);
        }
    }

    @Test
    void badRequests_areOneSentence_4xx(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).start(); HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            HttpResponse<String> noSource = post(http, api.resolve("warm"), "{}");
            assertThat(noSource.statusCode()).isEqualTo(400);
            assertThat(JSON.readTree(noSource.body()).get("error").get("message").asText()).contains("warm needs");
            assertThat(get(http, api.resolve("warm/w999")).statusCode()).isEqualTo(404);
            HttpResponse<String> dropAll = http.send(HttpRequest.newBuilder(api.resolve("cache")).DELETE().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(dropAll.statusCode()).isEqualTo(400);
            assertThat(get(http, api.resolve("cache?bucket=Bad_Bucket")).statusCode()).isEqualTo(400);
            HttpResponse<String> wrongMethod = post(http, api.resolve("cache"), "{}");
            assertThat(wrongMethod.statusCode()).isEqualTo(405);
        }
    }
}
