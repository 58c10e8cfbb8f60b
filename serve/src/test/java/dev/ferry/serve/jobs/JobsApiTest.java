package dev.ferry.serve.jobs;

import static io.netty.handler.codec.http.HttpMethod.GET;
import static io.netty.handler.codec.http.HttpMethod.POST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.serve.protocol.S3Error;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jobs resource of ferry's own API ({@code /_ferry/v1/jobs}), through {@link ControlApi#handle}: a registration
 * answered with its plan and prediction, found again, refused with a 4xx whose sentence names the field or the bound,
 * replaced, abandoned; and a job's order, checkpoint and progress. A real node over a folder store holding a manifest
 * of 128 samples in 8 shards (4 KiB blocks), on a manual clock.
 */
class JobsApiTest {
    private static String train(long seed, String extra) {
        return "{\"job\":\"train\",\"manifest_key\":\"data/manifest.json\",\"seed\":" + seed
                + ",\"world\":{\"nodes\":1,\"ranks_per_node\":4,\"workers_per_rank\":1},\"batch_size\":4" + extra + "}";
    }

    private static JobsNode withManifest(Path dir) throws Exception {
        JobsNode n = JobsNode.start(dir);
        n.manifestInStore();
        return n;
    }

    @Test
    void register_answersTheJobItsPlanAndItsPredictedEgress(@TempDir Path dir) throws Exception {
        try (JobsNode n = withManifest(dir)) {
            JsonNode answer = new ApiCalls(n).ok(POST, "/_ferry/v1/jobs", train(7, ""));

            assertThat(answer.get("job").asText()).isEqualTo("train");
            assertThat(answer.get("registration").asText()).isEqualTo("new");
            assertThat(answer.get("samples").asLong()).isEqualTo(128);
            assertThat(answer.get("ranks").asInt()).isEqualTo(4);
            assertThat(answer.get("steps_per_epoch").asLong()).as("32 samples per rank in batches of 4").isEqualTo(8);
            assertThat(answer.get("planned_blocks").asInt()).isEqualTo(128);
            assertThat(answer.get("partition").asText()).isEqualTo("global");
            assertThat(answer.get("canonical_nodes").asInt()).isEqualTo(1);
            assertThat(answer.has("homes")).as("homes are the node partition's").isFalse();
            // a cold 64 MiB tier: epoch 1 reads the 128 KiB once, later epochs find it all on disk
            assertThat(answer.get("predicted_egress_bytes")).extracting(JsonNode::asLong).containsExactly(128L * 1024, 0L, 0L);
        }
    }

    @Test
    void register_ofTheNodePartition_answersTheHomes(@TempDir Path dir) throws Exception {
        try (JobsNode n = withManifest(dir)) {
            String body = "{\"job\":\"train\",\"manifest_key\":\"data/manifest.json\",\"world\":{\"nodes\":2,\"ranks_per_node\":2},\"node\":1}";

            JsonNode answer = new ApiCalls(n).ok(POST, "/_ferry/v1/jobs", body);

            assertThat(answer.get("partition").asText()).as("auto: node for more than one node").isEqualTo("node");
            assertThat(answer.at("/homes/nodes").asInt()).isEqualTo(2);
            assertThat(answer.at("/homes/node_of")).extracting(JsonNode::asInt).containsExactly(0, 1);
        }
    }

    @Test
    void register_byAnotherRank_findsTheJobAndByAnotherPlan_is409NamingWhatDiffers(@TempDir Path dir) throws Exception {
        try (JobsNode n = withManifest(dir)) {
            ApiCalls calls = new ApiCalls(n);
            calls.ok(POST, "/_ferry/v1/jobs", train(7, ""));

            assertThat(calls.ok(POST, "/_ferry/v1/jobs", train(7, "")).get("registration").asText()).isEqualTo("existing");
            S3Error conflict = calls.refused(POST, "/_ferry/v1/jobs", train(8, ",\"batch_size\":8"));
            assertThat(conflict.status()).isEqualTo(409);
            assertThat(conflict.code()).isEqualTo("JobConflict");
            assertThat(conflict.getMessage()).startsWith("job 'train' is already registered on this daemon with other arguments: "
                    + "seed 7 here, 8 asked; batch_size 4 here, 8 asked.");
        }
    }

    @Test
    void register_withReplace_replacesTheJob(@TempDir Path dir) throws Exception {
        try (JobsNode n = withManifest(dir)) {
            ApiCalls calls = new ApiCalls(n);
            RunningJob old = n.jobs.register(n.job("train", 7));

            assertThat(calls.ok(POST, "/_ferry/v1/jobs", train(8, ",\"replace\":true")).get("registration").asText()).isEqualTo("replaced");
            assertThat(n.jobs.jobs().get("train")).isNotSameAs(old);
        }
    }

    @Test
    void register_ofBadInput_is400WithASentenceNamingTheField(@TempDir Path dir) throws Exception {
        try (JobsNode n = withManifest(dir)) {
            ApiCalls calls = new ApiCalls(n);
            Map<String, String> refusals = Map.ofEntries(
                    Map.entry("", "InvalidJson: the request needs a JSON body"),
                    Map.entry("[1]", "InvalidJson: the body must be a JSON object"),
                    Map.entry("{\"job\":", "InvalidJson: the body is not valid JSON: "),
                    Map.entry("{\"job\":\"a b\"}", "InvalidArgument: job must be 1 to 128 letters, digits, '.', '_' or '-': 'a b'"),
                    Map.entry("{\"job\":\"x\"}", "InvalidArgument: a job needs manifest, manifest_key or ranks"),
                    Map.entry(train(7, ",\"batch_size\":0"), "InvalidArgument: batch_size must be 1 to 1048576: 0"),
                    Map.entry(train(7, ",\"batch_size\":1.5"), "InvalidArgument: batch_size must be a whole number from 1 to 1048576, not 1.5"),
                    Map.entry(train(7, ",\"node\":1"), "InvalidArgument: node must be 0 to 0: 1"),
                    Map.entry(train(7, ",\"replace\":\"yes\""), "InvalidArgument: replace must be true or false, not \"yes\""),
                    Map.entry(train(7, ",\"mix_fraction\":\"half\""), "InvalidArgument: mix_fraction must be a number from 0 to 1"),
                    Map.entry(train(7, ",\"partition\":\"global\",\"canonical_nodes\":2"),
                            "InvalidArgument: canonical_nodes applies to the node partition, not to global"),
                    Map.entry(train(7, ",\"resume\":{\"homes\":{\"nodes\":1,\"node_of\":[1]}}"),
                            "InvalidArgument: resume.homes.node_of[0] is 1 but resume.homes.nodes is 1: each entry must be a node from 0 to 0"),
                    Map.entry(train(7, ",\"resume\":[]"),
                            "InvalidArgument: resume must be an object: the answer of GET /_ferry/v1/jobs/{job}/checkpoint"),
                    Map.entry("{\"job\":\"x\",\"manifest_key\":\"manifest.json\"}", "InvalidArgument: manifest_key must be bucket/key, not 'manifest.json'"),
                    Map.entry("{\"job\":\"x\",\"ranks\":[]}", "InvalidArgument: ranks must be a non-empty array of arrays of bucket/key"),
                    Map.entry("{\"job\":\"x\",\"ranks\":[[\"data/shard-0.bin\"]],\"resume\":{}}",
                            "InvalidArgument: resume applies to a job with a manifest, not to one given as ranks"));
            SoftAssertions soft = new SoftAssertions();
            refusals.forEach((body, expected) -> {
                S3Error e = calls.refused(POST, "/_ferry/v1/jobs", body);
                soft.assertThat(e.status()).as(body).isEqualTo(400);
                soft.assertThat(e.code() + ": " + e.getMessage()).as(body).startsWith(expected);
            });
            soft.assertAll();
            assertThat(n.jobs.jobs()).as("nothing refused was registered").isEmpty();
        }
    }

    @Test
    void register_pastAPlansBounds_is400NamingTheBound(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            String tenTerabytes = manifest("{\"bucket\":\"data\",\"key\":\"big.tar\",\"size\":10000000000000,\"etag\":\"e\",\"samples\":1}");
            String threeMillion = manifest("{\"bucket\":\"data\",\"key\":\"s.tar\",\"size\":1048576,\"etag\":\"e\",\"samples\":3000000}");
            String manyRanks = manifest("{\"bucket\":\"data\",\"key\":\"s.tar\",\"size\":4096,\"etag\":\"e\",\"samples\":1}");

            S3Error blocks = calls.refused(POST, "/_ferry/v1/jobs", "{\"job\":\"big\",\"manifest\":" + tenTerabytes + "}");
            S3Error samples = calls.refused(POST, "/_ferry/v1/jobs", "{\"job\":\"many\",\"manifest\":" + threeMillion + "}");
            S3Error reads = calls.refused(POST, "/_ferry/v1/jobs", "{\"job\":\"wide\",\"manifest\":" + manyRanks
                    + ",\"world\":{\"nodes\":1000,\"ranks_per_node\":4096}}");

            assertThat(List.of(blocks, samples, reads)).allSatisfy(e -> assertThat(e.status()).isEqualTo(400));
            assertThat(blocks.getMessage()).contains("block reads of 4,096 bytes per epoch").contains("a job may plan at most 2,097,152");
            assertThat(samples.getMessage()).startsWith("the manifest declares more than 2,097,152 samples per epoch");
            assertThat(reads.getMessage()).startsWith("a world of 4,096,000 ranks (1,000 nodes x 4,096 ranks per node) reads 4,096,000 samples");
            assertThat(n.jobs.jobs()).isEmpty();
        }
    }

    @Test
    void register_whoseClientHasGone_is499AndRegistersNothing(@TempDir Path dir) throws Exception {
        try (JobsNode n = withManifest(dir)) {
            ApiCalls calls = new ApiCalls(n);

            S3Error e = catchThrowableOfType(S3Error.class, () -> calls.call(POST, "/_ferry/v1/jobs", train(7, ""), () -> true));

            assertThat(e.status()).isEqualTo(499);
            assertThat(e.code()).isEqualTo("ClientClosedRequest");
            assertThat(n.jobs.jobs()).isEmpty();
        }
    }

    @Test
    void register_ofExplicitRanks_looksUpEachObject(@TempDir Path dir) throws Exception {
        try (JobsNode n = withManifest(dir)) {
            JsonNode answer = new ApiCalls(n).ok(POST, "/_ferry/v1/jobs",
                    "{\"job\":\"eval\",\"ranks\":[[\"data/shard-0.bin\",\"data/shard-1.bin\"],[\"data/shard-2.bin\"]]}");

            assertThat(answer.get("samples").asLong()).isEqualTo(3);
            assertThat(answer.get("ranks").asInt()).isEqualTo(2);
            assertThat(answer.get("planned_blocks").asInt()).as("three whole objects of 4 blocks").isEqualTo(12);
            assertThat(answer.get("predicted_egress_bytes")).as("no manifest: no prediction").isEmpty();
        }
    }

    @Test
    void order_isTheWorkersSamplesAsSpansOrOnePerSample(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            Job job = n.jobs.register(n.job("train", 7)).job;
            List<Integer> expected = job.order(1, 2, 1, 2, 0).stream().map(SampleRange::index).toList();

            JsonNode spans = calls.ok(GET, "/_ferry/v1/jobs/train/order?epoch=1&rank=2&worker=1&workers=2", null);
            JsonNode samples = calls.ok(GET, "/_ferry/v1/jobs/train/order?epoch=1&rank=2&worker=1&workers=2&form=samples", null);

            assertThat(spans.get("sample_count").asInt()).as("a rank's 32 samples, every other batch of 4").isEqualTo(16).isEqualTo(expected.size());
            List<Integer> fromSpans = new ArrayList<>();
            for (JsonNode span : spans.get("spans")) {
                long from = span.get("offset").asLong();
                long to = from + span.get("length").asLong();
                for (JsonNode s : span.get("samples")) {
                    fromSpans.add(s.get(0).asInt());
                    assertThat(s.get(1).asLong()).as("a sample inside its span").isBetween(from, to - s.get(2).asLong());
                }
            }
            assertThat(fromSpans).isEqualTo(expected);
            assertThat(samples.get("samples")).extracting(s -> s.get("index").asInt()).isEqualTo(expected);
            assertThat(samples.get("samples")).allSatisfy(s -> assertThat(s.get("length").asLong()).isEqualTo(1024));
        }
    }

    @Test
    void order_outsideItsRanges_is400NamingTheParameter(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            n.jobs.register(n.job("train", 7));

            assertThat(calls.refused(GET, "/_ferry/v1/jobs/train/order?rank=4", null).getMessage()).isEqualTo("rank must be 0 to 3: 4");
            assertThat(calls.refused(GET, "/_ferry/v1/jobs/train/order?epoch=one", null).getMessage())
                    .isEqualTo("epoch must be a whole number, not 'one'");
            assertThat(calls.refused(GET, "/_ferry/v1/jobs/train/order?workers=2&worker=2", null).getMessage()).isEqualTo("worker must be 0 to 1: 2");
            assertThat(calls.refused(GET, "/_ferry/v1/jobs/train/order?form=rows", null).getMessage())
                    .isEqualTo("form must be spans or samples, not 'rows'");
        }
    }

    @Test
    void checkpoint_ofTheNodePartition_givesWhatAResumeTakesBack(@TempDir Path dir) throws Exception {
        try (JobsNode n = withManifest(dir)) {
            ApiCalls calls = new ApiCalls(n);
            calls.ok(POST, "/_ferry/v1/jobs", "{\"job\":\"train\",\"manifest_key\":\"data/manifest.json\",\"world\":{\"nodes\":2,\"ranks_per_node\":2}}");

            JsonNode checkpoint = calls.ok(GET, "/_ferry/v1/jobs/train/checkpoint?epoch=2&position=52", null);

            assertThat(checkpoint.toString()).isEqualTo("{\"job\":\"train\",\"epoch\":2,\"position\":52,\"canonical_nodes\":2,"
                    + "\"homes\":{\"nodes\":2,\"node_of\":[0,1]},\"round_homes\":{\"nodes\":2,\"node_of\":[0,1]}}");
            assertThat(calls.refused(GET, "/_ferry/v1/jobs/train/checkpoint?epoch=2", null).getMessage())
                    .isEqualTo("position is missing from the query");
            assertThat(calls.refused(GET, "/_ferry/v1/jobs/train/checkpoint?epoch=2&position=129", null).getMessage())
                    .isEqualTo("position must be 0 to 128: 129");
        }
    }

    @Test
    void progress_movesTheJobAndIsAnsweredWithTheAdvice(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            RunningJob run = n.jobs.register(n.job("train", 7));

            JsonNode answer = calls.ok(POST, "/_ferry/v1/jobs/train/progress",
                    "{\"rank\":3,\"epoch\":2,\"position\":16,\"samples\":16,\"waits_ms\":[0.5,1.5,2.5,3.5]}");

            assertThat(answer.get("ok").asBoolean()).isTrue();
            assertThat(answer.get("advice").isArray()).isTrue();
            assertThat(run.current().number).isEqualTo(2);
            assertThat(run.current().position).isEqualTo(16);
            assertThat(run.current().steps).isEqualTo(4);
            assertThat(run.current().waitTotalMicros).isEqualTo(8000);
        }
    }

    @Test
    void progress_ofBadInput_is400NamingTheField(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            RunningJob run = n.jobs.register(n.job("train", 7));
            Map<String, String> refusals = Map.of(
                    "{\"position\":1}", "epoch is missing",
                    "{\"epoch\":0,\"position\":1}", "epoch must be 1 to 2147483647: 0",
                    "{\"epoch\":1}", "position is missing",
                    "{\"epoch\":1,\"position\":1,\"rank\":4}", "rank must be 0 to 3: 4",
                    "{\"epoch\":1,\"position\":1,\"waits_ms\":5}", "waits_ms must be an array of milliseconds",
                    "{\"epoch\":1,\"position\":1,\"waits_ms\":[1,-2]}", "waits_ms[1] must be a non-negative number of milliseconds",
                    "{\"epoch\":1,\"position\":1,\"waits_ms\":[\"1\"]}", "waits_ms[0] must be a non-negative number of milliseconds");
            SoftAssertions soft = new SoftAssertions();
            refusals.forEach((body, expected) -> {
                S3Error e = calls.refused(POST, "/_ferry/v1/jobs/train/progress", body);
                soft.assertThat(e.status()).as(body).isEqualTo(400);
                soft.assertThat(e.getMessage()).as(body).isEqualTo(expected);
            });
            soft.assertAll();
            assertThat(run.current().position).as("no refused report moved the job").isZero();
        }
    }

    private static String manifest(String... shards) {
        return "{\"format\":\"ferry-manifest/1\",\"shards\":[" + String.join(",", shards) + "]}";
    }
}
