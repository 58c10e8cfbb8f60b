package dev.ferry.serve.jobs;

import static dev.ferry.serve.ApiHttp.JSON;
import static dev.ferry.serve.ApiHttp.getOk;
import static dev.ferry.serve.ApiHttp.postOk;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.Shard;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.ObjectKey;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The advisor in the daemon, on two jobs of one daemon over the embedded store: a job whose working set is
 * twice the local tier gets the sizing finding and its measured egress matches the plan's prediction;
 * a job whose consumer waits on a slow decode while every read hits gets the CPU-bound finding. Both reach
 * the status, and the progress answers carry them.
 */
class DaemonAdvisorTest {
    /** Steps between progress reports: the daemon's eviction clock moves with them. */
    static int REPORT_EVERY = 1;

    /** Writes {@code shards} objects of {@code samples} samples of {@code sampleBytes} through the daemon; returns their manifest. */
    static Manifest dataset(DaemonFixture ferry, String prefix, int shards, int samples, int sampleBytes) {
        List<Shard> list = new ArrayList<>();
        Random random = new Random(prefix.hashCode());
        try (S3Client s3 = ferry.sdk("a", "b")) {
            for (int i = 0; i < shards; i++) {
                byte[] data = new byte[samples * sampleBytes];
                random.nextBytes(data);
                String key = prefix + "/shard-" + i + ".bin";
                String etag = s3.putObject(b -> b.bucket("data").key(key), RequestBody.fromBytes(data)).eTag().replace("\"", "");
                list.add(new Shard(ObjectKey.of("data", key), data.length, etag, samples));
            }
        }
        return new Manifest(list);
    }

    static String register(Path dir, String job, Manifest manifest, int epochs) throws Exception {
        Path file = dir.resolve(job + ".json");
        ManifestJson.write(manifest, "test", file);
        return "{\"job\":\"" + job + "\",\"manifest\":" + Files.readString(file) + ",\"seed\":3,\"batch_size\":4,\"epochs\":" + epochs + "}";
    }

    /**
     * One rank reads its order of {@code epoch} batch by batch: a loader thread fetches and decodes ({@code
     * decodeMillis} per sample) into a queue two batches deep; the consumer takes batches at once and reports
     * how long it waited for each. Returns the last progress answer.
     */
    static JsonNode epoch(HttpClient http, URI api, URI endpoint, String job, int epoch, long decodeMillis) throws Exception {
        // one entry per sample (the order's older form), as a loader that reads sample by sample takes it
        JsonNode order = getOk(http, api.resolve("jobs/" + job + "/order?epoch=" + epoch + "&rank=0&form=samples"));
        List<JsonNode> samples = new ArrayList<>();
        order.get("samples").forEach(samples::add);
        BlockingQueue<Integer> batches = new ArrayBlockingQueue<>(2);
        Thread loader = Thread.ofPlatform().start(() -> {
            try {
                for (int from = 0; from < samples.size(); from += 4) {
                    int to = Math.min(samples.size(), from + 4);
                    for (JsonNode s : samples.subList(from, to)) {
                        long offset = s.get("offset").asLong();
                        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(endpoint.resolve("/data/" + s.get("key").asText()))
                                .header("Range", "bytes=" + offset + "-" + (offset + s.get("length").asLong() - 1)).build(),
                                HttpResponse.BodyHandlers.ofByteArray());
                        if (r.statusCode() != 206) {
                            throw new IllegalStateException("sample read answered " + r.statusCode());
                        }
                        Thread.sleep(decodeMillis); // decoding
                    }
                    batches.put(to - from);
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        int consumed = 0;
        List<Double> waits = new ArrayList<>();
        JsonNode answer = null;
        while (consumed < samples.size()) {
            long t0 = System.nanoTime();
            consumed += batches.take();
            waits.add((System.nanoTime() - t0) / 1e6);
            if (waits.size() == REPORT_EVERY || consumed == samples.size()) {
                answer = postOk(http, api.resolve("jobs/" + job + "/progress"), JSON.writeValueAsString(Map.of("rank", 0, "epoch", epoch,
                        "position", consumed, "samples", waits.size() * 4L, "waits_ms", waits)));
                waits.clear();
            }
        }
        loader.join();
        return answer;
    }

    static JsonNode job(JsonNode status, String name) {
        for (JsonNode j : status.get("jobs")) {
            if (j.get("job").asText().equals(name)) {
                return j;
            }
        }
        throw new AssertionError("no job " + name + " in the status");
    }

    @Test
    void aTierTooSmallGetsTheSizingFinding_withEgressAsPredicted_andASlowDecodeGetsTheCpuBoundFinding(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("cache-size", "16MiB").with("prefetch-bytes", "0").start();
                HttpClient http = HttpClient.newHttpClient()) {
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            // 32 MiB in 16 objects of 16 samples of 128 KiB, a tier of 16 MiB
            Manifest big = dataset(ferry, "big", 16, 16, 128 << 10);
            JsonNode reg = postOk(http, api.resolve("jobs"), register(dir, "big", big, 3));
            assertThat(reg.get("predicted_egress_bytes")).hasSize(3);
            JsonNode answer = null;
            for (int e = 1; e <= 3; e++) {
                answer = epoch(http, api, ferry.endpoint(), "big", e, 0);
            }
            JsonNode status = getOk(http, api.resolve("status"));
            JsonNode bigJob = job(status, "big");
            for (int i = 0; i < 3; i++) {
                JsonNode e = bigJob.get("epochs").get(i);
                long measured = e.get("egress_bytes").asLong();
                long predicted = e.get("predicted_egress_bytes").asLong();
                assertThat((double) measured).as("epoch %d egress: measured vs the plan's prediction", i + 1)
                        .isCloseTo((double) predicted, org.assertj.core.data.Offset.offset(0.05 * predicted));
            }
            assertThat(bigJob.get("advice").toString()).as(bigJob.toString()).contains("The working set outgrew the node");
            assertThat(answer.get("advice").toString()).as("the progress answer carries the findings").contains("outgrew");

            // 1 MiB that fits, read by a consumer whose loader decodes slowly: data local, consumer waiting
            Manifest small = dataset(ferry, "small", 2, 8, 64 << 10);
            postOk(http, api.resolve("jobs"), register(dir, "slow", small, 2));
            for (int e = 1; e <= 2; e++) {
                answer = epoch(http, api, ferry.endpoint(), "slow", e, 15);
            }
            JsonNode slow = job(getOk(http, api.resolve("status")), "slow");
            assertThat(slow.get("advice").toString()).contains("Preprocessing is CPU-bound").contains("num_workers");
            assertThat(slow.get("advice").toString()).doesNotContain("outgrew");
            assertThat(answer.get("advice").toString()).contains("CPU-bound");
            HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.body()).contains("ferry_job_predicted_egress_bytes{job=\"big\"}").contains("ferry_job_findings{job=\"slow\"}");
        }
    }
}
