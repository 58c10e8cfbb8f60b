package dev.ferry.serve.jobs;

import static dev.ferry.serve.ApiHttp.getOk;
import static dev.ferry.serve.ApiHttp.postOk;
import static dev.ferry.serve.jobs.DaemonAdvisorTest.dataset;
import static dev.ferry.serve.jobs.DaemonAdvisorTest.epoch;
import static dev.ferry.serve.jobs.DaemonAdvisorTest.job;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.serve.DaemonFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several jobs on one daemon over the embedded S3 store: eviction follows the union of their futures. Two
 * jobs shuffling one corpus that fits the tier share its blocks (later epochs fetch nothing for either);
 * an evaluation pass over other data, between a training job's epochs, does not evict what the training
 * job reads next, so the training job's egress stays what its plan predicts, where following only the job
 * that reported last costs it a refetch of what the evaluation pushed out.
 */
class MultiJobDaemonTest {
    private static final int MIB = 1 << 20;

    private static String register(Path dir, String job, Manifest manifest, int seed, int epochs) throws Exception {
        Path file = dir.resolve(job + ".json");
        ManifestJson.write(manifest, "test", file);
        return "{\"job\":\"" + job + "\",\"manifest\":" + Files.readString(file) + ",\"seed\":" + seed + ",\"batch_size\":4,\"epochs\":"
                + epochs + "}";
    }

    private static long egress(HttpClient http, URI api) throws Exception {
        return getOk(http, api.resolve("status")).get("tiers").get("origin").get("egress_bytes").asLong();
    }

    @Test
    void twoJobsOverOneCorpusShareItsBlocks_laterEpochsFetchNothingForEither(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("cache-size", "16MiB").with("prefetch-bytes", "0").start();
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            Manifest corpus = dataset(ferry, "corpus", 8, 16, 64 << 10); // 8 MiB in a 16 MiB tier
            long corpusBytes = 8L * MIB;
            postOk(http, api.resolve("jobs"), register(dir, "a", corpus, 3, 3));
            postOk(http, api.resolve("jobs"), register(dir, "b", corpus, 11, 3)); // another order of the same samples
            long[] byEpoch = new long[3];
            for (int e = 1; e <= 3; e++) {
                int epoch = e;
                long before = egress(http, api);
                CompletableFuture<JsonNode> a = CompletableFuture.supplyAsync(() -> run(http, api, ferry.endpoint(), "a", epoch));
                CompletableFuture<JsonNode> b = CompletableFuture.supplyAsync(() -> run(http, api, ferry.endpoint(), "b", epoch));
                a.join();
                b.join();
                byEpoch[e - 1] = egress(http, api) - before;
            }
            // epoch 1 reads the corpus once for both (each block fetched once; a block both miss at the same
            // moment may be fetched twice), later epochs nothing
            assertThat(byEpoch[0]).as("epoch 1, both jobs").isBetween(corpusBytes, 2 * corpusBytes);
            assertThat(byEpoch[1]).as("epoch 2, both jobs").isLessThanOrEqualTo(corpusBytes / 20);
            assertThat(byEpoch[2]).as("epoch 3, both jobs").isLessThanOrEqualTo(corpusBytes / 20);
            JsonNode status = getOk(http, api.resolve("status"));
            for (String name : new String[] {"a", "b"}) {
                JsonNode j = job(status, name);
                assertThat(j.get("epochs")).hasSize(3);
                assertThat(j.get("epochs").get(2).get("local_hit_rate").asDouble()).as(name + " epoch 3 hit rate: " + j).isGreaterThan(0.95);
            }
            JsonNode total = status.get("jobs_total");
            assertThat(total.get("jobs").asInt()).isEqualTo(2);
            assertThat(total.get("eviction_follows").asText()).isEqualTo("all-jobs");
            // both jobs' third epochs together: 128 samples each
            assertThat(total.get("samples").asLong()).isEqualTo(256);
            assertThat(total.get("steps").asLong()).isEqualTo(64);
            assertThat(total.get("egress_bytes").asLong()).isEqualTo(egress(http, api));
            // the jobs' rows add up: every epoch of both, each fetched block charged once, against the daemon's count
            long rows = 0;
            for (String name : new String[] {"a", "b"}) {
                for (JsonNode e : job(status, name).get("epochs")) {
                    rows += e.get("egress_bytes").asLong();
                    // the reads of a block both plan are shared out by how far each job has got: about its own 8 MiB each
                    assertThat((double) e.get("read_bytes").asLong()).as(name + " epoch " + e.get("epoch") + " reads")
                            .isCloseTo(corpusBytes, org.assertj.core.data.Offset.offset(corpusBytes / 4.0));
                }
            }
            assertThat(total.get("jobs_egress_bytes").asLong()).isEqualTo(rows);
            assertThat(rows + total.get("other_egress_bytes").asLong()).isEqualTo(total.get("egress_bytes").asLong());
            assertThat((double) rows).as("what left the store was the jobs' planned reads")
                    .isCloseTo((double) (byEpoch[0] + byEpoch[1] + byEpoch[2]), org.assertj.core.data.Offset.offset(0.02 * corpusBytes));
        }
    }

    private static JsonNode run(HttpClient http, URI api, URI endpoint, String job, int epoch) {
        try {
            return epoch(http, api, endpoint, job, epoch, 0);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /**
     * A training job of 10 MiB (samples of 64 KiB) and evaluation passes over 10 MiB of other data (samples of
     * 1 MiB, so each block is read once a pass) in a 16 MiB tier: train
     * epoch 1, evaluate, train epoch 2, evaluate, train epoch 3. Returns the training job's egress in each
     * epoch (measured around its own epoch: nothing else reads meanwhile) and its predicted egress.
     */
    private static long[][] trainAndEvaluate(Path dir, String evictionFollows) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("cache-size", "16MiB").with("prefetch-bytes", "0")
                .with("eviction-follows", evictionFollows).start();
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            Manifest train = dataset(ferry, "train", 10, 16, 64 << 10);
            Manifest eval = dataset(ferry, "eval", 10, 1, MIB); // samples of a block each: every block read once a pass
            JsonNode reg = postOk(http, api.resolve("jobs"), register(dir, "train", train, 3, 3));
            long[] measured = new long[3];
            long[] predicted = new long[3];
            for (int e = 1; e <= 3; e++) {
                predicted[e - 1] = reg.get("predicted_egress_bytes").get(e - 1).asLong();
                long before = egress(http, api);
                epoch(http, api, ferry.endpoint(), "train", e, 0);
                measured[e - 1] = egress(http, api) - before;
                if (e < 3) {
                    // one evaluation pass, registered as such ("epochs": 1; a new job each time: registering the
                    // same job again would find the pass already read)
                    long evalBefore = egress(http, api);
                    postOk(http, api.resolve("jobs"), register(dir.resolve(".."), "eval-" + e, eval, 5, 1));
                    epoch(http, api, ferry.endpoint(), "eval-" + e, 1, 0);
                    assertThat(egress(http, api) - evalBefore).as("the evaluation reads its data from the store").isGreaterThan(0);
                }
            }
            return new long[][] {measured, predicted};
        }
    }

    @Test
    void anEvaluationPassDoesNotEvictWhatTrainingReadsNext(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("union"));
        long[][] union = trainAndEvaluate(dir.resolve("union"), "all-jobs");
        long trainBytes = 10L * MIB;
        assertThat(union[1][1]).as("the plan predicts epoch 2 from the tier: the job fits").isLessThan(trainBytes / 20);
        for (int e = 2; e <= 3; e++) {
            assertThat(union[0][e - 1]).as("training epoch %d egress, evaluation in between, eviction following all jobs", e)
                    .isLessThanOrEqualTo(union[1][e - 1] + trainBytes / 20);
        }
        // the old behaviour: eviction follows whoever reported last, so the evaluation's plan alone rules while
        // it runs and the training job's blocks, unplanned then, make its room
        Files.createDirectories(dir.resolve("last"));
        long[][] last = trainAndEvaluate(dir.resolve("last"), "last-report");
        assertThat(last[0][1]).as("training epoch 2 egress when eviction follows the last reporter").isGreaterThan(trainBytes / 4);
    }

    /**
     * A checkpoint saved through write-back and read back whole between a training job's epochs (8 MiB beside the
     * job's 10 MiB in a 16 MiB tier, so one of them cannot stay whole): its blocks are in no plan, and the training
     * job's next epoch still reads its planned blocks from the tier, its egress what its plan predicts.
     */
    @Test
    void aCheckpointBetweenEpochs_doesNotEvictWhatTrainingReadsNext(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("cache-size", "16MiB").with("prefetch-bytes", "0")
                .with("write-back", true).start();
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            Manifest train = dataset(ferry, "train", 10, 16, 64 << 10);
            JsonNode reg = postOk(http, api.resolve("jobs"), register(dir, "train", train, 3, 3));
            byte[] checkpoint = new byte[8 * MIB];
            new java.util.Random(9).nextBytes(checkpoint);
            for (int e = 1; e <= 3; e++) {
                long before = egress(http, api);
                epoch(http, api, ferry.endpoint(), "train", e, 0);
                long measured = egress(http, api) - before;
                long predicted = reg.get("predicted_egress_bytes").get(e - 1).asLong();
                assertThat(measured).as("training epoch %d egress, a checkpoint saved and loaded before it", e)
                        .isLessThanOrEqualTo(predicted + 10L * MIB / 20);
                if (e < 3) {
                    URI key = ferry.endpoint().resolve("/data/ckpt/step-" + e + ".pt");
                    HttpResponse<String> put = http.send(HttpRequest.newBuilder(key).PUT(HttpRequest.BodyPublishers.ofByteArray(checkpoint))
                            .build(), HttpResponse.BodyHandlers.ofString());
                    assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
                    postOk(http, api.resolve("flush?timeout_ms=30000"), "");
                    HttpResponse<byte[]> load = http.send(HttpRequest.newBuilder(key).build(), HttpResponse.BodyHandlers.ofByteArray());
                    assertThat(load.body()).isEqualTo(checkpoint);
                }
            }
        }
    }
}
