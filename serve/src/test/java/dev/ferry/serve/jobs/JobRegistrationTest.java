package dev.ferry.serve.jobs;

import static dev.ferry.serve.ApiHttp.JSON;
import static dev.ferry.serve.ApiHttp.ok;
import static dev.ferry.serve.ApiHttp.post;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.serve.DaemonFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every rank of a job registers it (torchrun starts them all with the same script): the same arguments find the
 * job already running, and other arguments under the same name get a 409 that says what differs, unless the
 * registration asks to replace the job. A real daemon over real sockets.
 */
class JobRegistrationTest {
    /** A registration of {@code train} from the manifest in the store, as every rank of node {@code node} sends it. */
    private static String train(long seed, int nodes, int node, String extra) {
        return "{\"job\":\"train\",\"manifest_key\":\"data/manifest.json\",\"seed\":" + seed + ",\"world\":{\"nodes\":" + nodes
                + ",\"ranks_per_node\":4,\"workers_per_rank\":1},\"node\":" + node + ",\"batch_size\":4" + extra + "}";
    }

    private static DaemonFixture daemonWithManifest(Path dir) throws Exception {
        return ManifestDaemon.start(dir, 8, 16 * 1024, 16);
    }

    @Test
    void register_byEveryRankAtOnce_startsTheJobOnce(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = daemonWithManifest(dir); HttpClient http = HttpClient.newHttpClient();
                ExecutorService ranks = Executors.newFixedThreadPool(8)) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            CountDownLatch go = new CountDownLatch(1);
            List<Future<HttpResponse<String>>> answers = new ArrayList<>();
            for (int rank = 0; rank < 8; rank++) {
                answers.add(ranks.submit(() -> {
                    go.await();
                    return post(http, api.resolve("jobs"), train(7, 2, 0, ""));
                }));
            }
            go.countDown();
            List<String> outcomes = new ArrayList<>();
            for (Future<HttpResponse<String>> a : answers) {
                JsonNode answer = ok(a.get());
                outcomes.add(answer.get("registration").asText());
                assertThat(answer.get("ranks").asInt()).isEqualTo(8);
            }
            assertThat(outcomes).as("one rank started the job, the others found it").containsOnlyOnce("new").filteredOn("existing"::equals).hasSize(7);
            JsonNode status = ok(http.send(HttpRequest.newBuilder(api.resolve("status")).build(), HttpResponse.BodyHandlers.ofString()));
            assertThat(status.get("jobs")).hasSize(1);
            assertThat(status.get("jobs").get(0).get("epochs")).as("one epoch record: no rank restarted the job").hasSize(1);
        }
    }

    @Test
    void register_sameArgumentsAfterProgress_keepsTheRunningJob(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = daemonWithManifest(dir); HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            assertThat(ok(post(http, api.resolve("jobs"), train(7, 1, 0, ""))).get("registration").asText()).isEqualTo("new");
            ok(post(http, api.resolve("jobs/train/progress"), "{\"rank\":0,\"epoch\":2,\"position\":8,\"samples\":8,\"waits_ms\":[1.0,2.0]}"));
            // a rank that starts late registers the same job: it finds it in epoch 2, its reports kept
            assertThat(ok(post(http, api.resolve("jobs"), train(7, 1, 0, ""))).get("registration").asText()).isEqualTo("existing");
            JsonNode job = ok(http.send(HttpRequest.newBuilder(api.resolve("status")).build(), HttpResponse.BodyHandlers.ofString()))
                    .get("jobs").get(0);
            assertThat(job.get("epoch").asInt()).isEqualTo(2);
            assertThat(job.get("position").asLong()).isEqualTo(8);
        }
    }

    @Test
    void register_otherArgumentsUnderTheSameName_is409NamingWhatDiffers(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = daemonWithManifest(dir); HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            ok(post(http, api.resolve("jobs"), train(7, 2, 0, "")));

            HttpResponse<String> seed = post(http, api.resolve("jobs"), train(8, 2, 0, ""));
            assertThat(seed.statusCode()).isEqualTo(409);
            JsonNode error = JSON.readTree(seed.body()).get("error");
            assertThat(error.get("code").asText()).isEqualTo("JobConflict");
            assertThat(error.get("message").asText()).startsWith("job 'train' is already registered on this daemon with other arguments: "
                    + "seed 7 here, 8 asked.").contains("replace");

            // a rank of another node sent to this node's daemon: the message says where it should have gone
            HttpResponse<String> node = post(http, api.resolve("jobs"), train(7, 2, 1, ""));
            assertThat(node.statusCode()).isEqualTo(409);
            assertThat(JSON.readTree(node.body()).get("error").get("message").asText())
                    .contains("node 0 here, 1 asked (each node's ranks register with their own node's daemon)");

            HttpResponse<String> several = post(http, api.resolve("jobs"), train(8, 4, 0, ",\"replace\":false"));
            assertThat(several.statusCode()).isEqualTo(409);
            assertThat(JSON.readTree(several.body()).get("error").get("message").asText()).contains("seed 7 here, 8 asked; ", "canonical_nodes 2 here, 4 asked; ",
                    "world 2x4x1 (nodes x ranks_per_node x workers_per_rank) here, 4x4x1 (nodes x ranks_per_node x workers_per_rank) asked");

            JsonNode status = ok(http.send(HttpRequest.newBuilder(api.resolve("status")).build(), HttpResponse.BodyHandlers.ofString()));
            assertThat(status.get("jobs")).as("the refused registrations changed nothing").hasSize(1);
        }
    }

    @Test
    void register_withReplace_replacesADifferentJobOnceAndKeepsAnIdenticalOne(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = daemonWithManifest(dir); HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            ok(post(http, api.resolve("jobs"), train(7, 2, 0, "")));
            // the job resumes on a world of 4 nodes: every rank asks to replace, the first one does
            JsonNode first = ok(post(http, api.resolve("jobs"), train(7, 4, 0, ",\"replace\":true,\"canonical_nodes\":2")));
            assertThat(first.get("registration").asText()).isEqualTo("replaced");
            assertThat(first.get("ranks").asInt()).isEqualTo(16);
            JsonNode second = ok(post(http, api.resolve("jobs"), train(7, 4, 0, ",\"replace\":true,\"canonical_nodes\":2")));
            assertThat(second.get("registration").asText()).isEqualTo("existing");

            HttpResponse<String> bad = post(http, api.resolve("jobs"), train(7, 4, 0, ",\"replace\":\"yes\""));
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(bad.body()).contains("replace must be true or false");
        }
    }
}
