package dev.ferry.serve.jobs;

import static dev.ferry.serve.ApiHttp.JSON;
import static dev.ferry.serve.ApiHttp.get;
import static dev.ferry.serve.ApiHttp.ok;
import static dev.ferry.serve.ApiHttp.post;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.serve.DaemonFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job re-registered on another world with its checkpoint ({@code resume}): the daemon answers the homes it dealt
 * with and the checkpoint to record, refuses a resume that does not fit with one sentence naming what is wrong,
 * and tells a rank with other homes apart (409). A real daemon over real sockets.
 */
class ResumeHomesApiTest {
    /** Node {@code node}'s registration of {@code train} on {@code nodes} nodes of one rank, 12 canonical nodes unless {@code extra} says. */
    private static String train(int nodes, int node, String extra) {
        return "{\"job\":\"train\",\"manifest_key\":\"data/manifest.json\",\"seed\":3,\"partition\":\"node\",\"world\":{\"nodes\":" + nodes
                + ",\"ranks_per_node\":1,\"workers_per_rank\":1},\"node\":" + node + ",\"batch_size\":1" + extra + "}";
    }

    private static DaemonFixture daemonWithManifest(Path dir) throws Exception {
        return ManifestDaemon.start(dir, 12, 8 * 1024, 8);
    }

    @Test
    void resume_onFewerNodes_movesOnlyTheDepartedNodesCanonicalNodes_andTheCheckpointCarriesThem(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = daemonWithManifest(dir); HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            JsonNode four = ok(post(http, api.resolve("jobs"), train(4, 0, ",\"canonical_nodes\":12")));
            assertThat(four.get("homes").toString()).isEqualTo("{\"nodes\":4,\"node_of\":[0,1,2,3,0,1,2,3,0,1,2,3]}");
            // halfway through epoch 2, inside a round (96 samples, 12 per round; 4 ranks: position 50 is in round 4)
            JsonNode checkpoint = ok(get(http, api.resolve("jobs/train/checkpoint?epoch=2&position=50")));
            assertThat(checkpoint.get("canonical_nodes").asInt()).isEqualTo(12);
            assertThat(checkpoint.get("round_homes")).isEqualTo(checkpoint.get("homes"));

            // every rank of the 3-node world passes the checkpoint back: no canonical_nodes needed, it comes with the homes
            String resume = ",\"replace\":true,\"resume\":" + checkpoint;
            JsonNode three = ok(post(http, api.resolve("jobs"), train(3, 0, resume)));
            assertThat(three.get("registration").asText()).isEqualTo("replaced");
            assertThat(three.get("canonical_nodes").asInt()).isEqualTo(12);
            assertThat(three.get("moved_canonical_nodes").asInt()).isEqualTo(3);
            assertThat(three.get("homes").toString()).isEqualTo("{\"nodes\":3,\"node_of\":[0,1,2,0,0,1,2,1,0,1,2,2]}");
            assertThat(ok(post(http, api.resolve("jobs"), train(3, 0, resume))).get("registration").asText()).isEqualTo("existing");
            // the resumed job starts in the checkpoint's epoch, at its position: prefetch and eviction follow from there
            JsonNode job = ok(get(http, api.resolve("status"))).get("jobs").get(0);
            assertThat(job.get("epoch").asInt()).isEqualTo(2);
            assertThat(job.get("position").asLong()).isEqualTo(50);

            // a checkpoint inside the round the resume began in keeps the old world's order for it; later ones are the new world's
            JsonNode same = ok(get(http, api.resolve("jobs/train/checkpoint?epoch=2&position=53")));
            assertThat(same.get("round_homes")).isEqualTo(checkpoint.get("homes"));
            assertThat(same.get("homes")).isEqualTo(three.get("homes"));
            JsonNode later = ok(get(http, api.resolve("jobs/train/checkpoint?epoch=2&position=80")));
            assertThat(later.get("round_homes")).isEqualTo(three.get("homes"));
            JsonNode nextEpoch = ok(get(http, api.resolve("jobs/train/checkpoint?epoch=3&position=1")));
            assertThat(nextEpoch.get("round_homes")).isEqualTo(three.get("homes"));

            // a rank that lost its checkpoint is dealt c mod 3: another job, named
            HttpResponse<String> other = post(http, api.resolve("jobs"), train(3, 0, ",\"canonical_nodes\":12"));
            assertThat(other.statusCode()).isEqualTo(409);
            assertThat(other.body()).contains("homes [0, 1, 2, 0, 0, 1, 2, 1, 0, 1, 2, 2] here, [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2] asked");
        }
    }

    @Test
    void resume_onOneNode_staysTheNodePartition_withEveryCanonicalNodeThere(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = daemonWithManifest(dir); HttpClient http = HttpClient.newHttpClient()) {
            // no partition given: a fresh job on one node would read by the global plan, another order
            JsonNode one = ok(post(http, ferry.endpoint().resolve("/_ferry/v1/jobs"), "{\"job\":\"one\",\"manifest_key\":\"data/manifest.json\","
                    + "\"seed\":3,\"world\":{\"nodes\":1},\"resume\":{\"homes\":{\"nodes\":4,\"node_of\":[0,1,2,3,0,1,2,3,0,1,2,3]}}}"));
            assertThat(one.get("partition").asText()).isEqualTo("node");
            assertThat(one.get("canonical_nodes").asInt()).isEqualTo(12);
            assertThat(one.get("homes").toString()).isEqualTo("{\"nodes\":1,\"node_of\":[0,0,0,0,0,0,0,0,0,0,0,0]}");
            assertThat(one.get("moved_canonical_nodes").asInt()).isEqualTo(9);
        }
    }

    @Test
    void resume_thatDoesNotFit_is400WithOneSentenceNamingWhatIsWrong(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = daemonWithManifest(dir); HttpClient http = HttpClient.newHttpClient()) {
            URI jobs = ferry.endpoint().resolve("/_ferry/v1/jobs");
            String homes12 = "{\"nodes\":4,\"node_of\":[0,1,2,3,0,1,2,3,0,1,2,3]}";
            Map<String, String> cases = new java.util.LinkedHashMap<>();
            cases.put(",\"resume\":{\"homes\":{\"nodes\":4,\"node_of\":[0,1,2,3,0,1,2,3]}},\"canonical_nodes\":12",
                    "resume.homes.node_of has 8 entries but canonical_nodes is 12");
            cases.put(",\"resume\":{\"homes\":{\"nodes\":4,\"node_of\":[0,1,2,3,0,1,2,4,0,1,2,3]}}",
                    "resume.homes.node_of[7] is 4 but resume.homes.nodes is 4: each entry must be a node from 0 to 3");
            cases.put(",\"resume\":{\"homes\":{\"nodes\":4,\"node_of\":[0,1,-1]}}", "resume.homes.node_of[2] is -1");
            cases.put(",\"resume\":{\"homes\":{\"nodes\":4,\"node_of\":[0,1.5]}}", "resume.homes.node_of[1] must be a whole number");
            cases.put(",\"resume\":{\"homes\":{\"node_of\":[0,1]}}", "resume.homes.nodes is missing");
            cases.put(",\"resume\":{\"homes\":{\"nodes\":4,\"node_of\":[]}}", "resume.homes.node_of must be a non-empty array");
            cases.put(",\"resume\":{\"homes\":[0,1,2]}", "resume.homes must be an object");
            cases.put(",\"resume\":{\"epoch\":2,\"position\":5}", "resume needs homes");
            cases.put(",\"resume\":[1]", "resume must be an object");
            cases.put(",\"resume\":{\"homes\":" + homes12 + ",\"round_homes\":" + homes12 + "}",
                    "resume.round_homes needs resume.epoch and resume.position");
            cases.put(",\"resume\":{\"homes\":" + homes12 + ",\"epoch\":2}", "resume needs both epoch and position, or neither");
            cases.put(",\"resume\":{\"homes\":" + homes12 + ",\"epoch\":2,\"position\":97}", "resume.position must be 0 to 96: 97");
            cases.put(",\"resume\":{\"homes\":" + homes12 + ",\"epoch\":2,\"position\":5,\"round_homes\":{\"nodes\":4,\"node_of\":[0,1,2,3]}}",
                    "resume.round_homes.node_of has 4 entries but resume.homes.node_of has 12");
            cases.put(",\"resume\":{\"homes\":" + homes12 + ",\"canonical_nodes\":6}", "resume.canonical_nodes is 6 but resume.homes.node_of has 12");
            for (Map.Entry<String, String> c : cases.entrySet()) {
                HttpResponse<String> r = post(http, jobs, train(3, 0, c.getKey()));
                assertThat(r.statusCode()).as("%s: %s", c.getKey(), r.body()).isEqualTo(400);
                assertThat(JSON.readTree(r.body()).path("error").path("message").asText()).as(c.getKey()).contains(c.getValue());
            }
            HttpResponse<String> global = post(http, jobs, "{\"job\":\"g\",\"manifest_key\":\"data/manifest.json\",\"partition\":\"global\","
                    + "\"world\":{\"nodes\":3},\"resume\":{\"homes\":" + homes12 + "}}");
            assertThat(global.statusCode()).isEqualTo(400);
            assertThat(global.body()).contains("resume.homes applies to the node partition, not to global");
            HttpResponse<String> explicit = post(http, jobs, "{\"job\":\"x\",\"ranks\":[[\"data/s-0.bin\"]],\"resume\":{\"homes\":" + homes12 + "}}");
            assertThat(explicit.statusCode()).isEqualTo(400);
            assertThat(explicit.body()).contains("resume applies to a job with a manifest");
            assertThat(ferry.daemon.jobs().jobs()).as("nothing was registered").isEmpty();
        }
    }
}
