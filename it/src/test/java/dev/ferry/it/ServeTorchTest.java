package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.loader.SyntheticDataset;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.store.file.FileObjectStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real PyTorch DataLoader (4 workers) reading a WebDataset-style dataset through {@code ferry serve} with
 * the Python client: every sample of the rank arrives once and in plan order (the script checks), and the
 * consumer's wait per step lands in the daemon's four numbers.
 */
class ServeTorchTest {
    @TempDir
    Path dir;

    @Test
    void aDataLoaderWithFourWorkersReadsThePlanAndItsWaitsReachTheDaemon() throws Exception {
        Path python = Servers.onPath("python3");
        Servers.requireTool(python != null, "python3");
        Servers.requireTool(Servers.run(Duration.ofMinutes(2), Map.of(), python.toString(), "-c", "import torch").exitCode() == 0,
                "PyTorch ('torch')");
        Path root = dir.resolve("store");
        Manifest manifest;
        try (FileObjectStore store = new FileObjectStore(root)) {
            store.createBucket("data");
            manifest = SyntheticDataset.write(store, "data", "train", 6, 20, 4096, 11);
        }
        Path manifestFile = dir.resolve("manifest.json");
        ManifestJson.write(manifest, "ServeTorchTest", manifestFile);
        Files.copy(manifestFile, root.resolve("data/train-manifest.json"));

        int port = Servers.freePort();
        Process ferry = Servers.ferry(dir.resolve("serve.log"), "serve", "--store-root", root.toString(), "--cache-dir",
                dir.resolve("cache").toString(), "--port", Integer.toString(port));
        try {
            Servers.awaitPort(port, Duration.ofSeconds(90), ferry);
            String url = "http://127.0.0.1:" + port;
            Path repo = Path.of(System.getProperty("user.dir")).getParent();
            Servers.Result r = Servers.run(Duration.ofMinutes(5), Map.of("PYTHONPATH", repo.resolve("clients/python").toString()),
                    python.toString(), repo.resolve("clients/python/tests/daemon_e2e.py").toString(), "--url", url, "--bucket", "data",
                    "--manifest-key", "train-manifest.json", "--job", "torch-e2e", "--batch-size", "4", "--workers", "4");
            assertThat(r.exitCode()).as(r.output()).isZero();
            JsonNode result = new ObjectMapper().readTree(r.output().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow());
            assertThat(result.get("samples").asLong()).isEqualTo(manifest.totalSamples());

            try (HttpClient http = HttpClient.newHttpClient()) {
                String body = http.send(HttpRequest.newBuilder(URI.create(url + "/_ferry/v1/status")).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
                JsonNode status = new ObjectMapper().readTree(body);
                JsonNode job = status.get("jobs").get(0);
                assertThat(job.get("job").asText()).isEqualTo("torch-e2e");
                JsonNode epoch = job.get("epochs").get(0);
                assertThat(epoch.get("steps").asLong()).as(body).isEqualTo(result.get("steps").asLong());
                assertThat(epoch.get("samples").asLong()).isEqualTo(manifest.totalSamples());
                assertThat(epoch.get("wait_total_s").asDouble()).as("the DataLoader's waits reached the daemon").isPositive();
                assertThat(status.get("four_numbers").get("job").asText()).isEqualTo("torch-e2e");
                assertThat(status.get("four_numbers").has("wait_per_step_ms_p99")).isTrue();
                // the advisor and the plan's prediction reach the status and the Python StepReporter
                assertThat(job.get("advice").toString()).contains("Projected egress");
                assertThat(result.get("advice").toString()).as("the reporter's advice").contains("Projected egress");
                assertThat((double) epoch.get("egress_bytes").asLong()).as("epoch 1 egress against the plan's prediction")
                        .isCloseTo((double) epoch.get("predicted_egress_bytes").asLong(),
                                org.assertj.core.data.Offset.offset(0.05 * epoch.get("predicted_egress_bytes").asLong()));
            }

            // node 0 of a two-node job with the node partition, through the Python client: it reads its own half
            Servers.Result node = Servers.run(Duration.ofMinutes(5), Map.of("PYTHONPATH", repo.resolve("clients/python").toString()),
                    python.toString(), repo.resolve("clients/python/tests/daemon_e2e.py").toString(), "--url", url, "--bucket", "data",
                    "--manifest-key", "train-manifest.json", "--job", "node-e2e", "--batch-size", "4", "--workers", "1", "--nodes", "2",
                    "--partition", "node", "--no-torch");
            assertThat(node.exitCode()).as(node.output()).isZero();
            JsonNode nodeResult = new ObjectMapper().readTree(node.output().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow());
            assertThat(nodeResult.get("samples").asLong()).as("3 of the 6 shards").isEqualTo(manifest.totalSamples() / 2);
            try (HttpClient http = HttpClient.newHttpClient()) {
                JsonNode status = new ObjectMapper().readTree(http.send(HttpRequest.newBuilder(URI.create(url + "/_ferry/v1/status")).build(),
                        HttpResponse.BodyHandlers.ofString()).body());
                JsonNode job = null;
                for (JsonNode j : status.get("jobs")) {
                    job = j.get("job").asText().equals("node-e2e") ? j : job;
                }
                assertThat(job).isNotNull();
                assertThat(job.get("partition").asText()).isEqualTo("node");
                assertThat(job.get("canonical_nodes").asInt()).isEqualTo(2);
                assertThat(job.get("global_batch_shard_mix").asDouble()).isPositive();
            }
        } finally {
            Servers.stop(ferry);
        }
    }
}
