package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.loader.SyntheticDataset;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.util.Sizes;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The four numbers as a user reads them, checked from outside (issue 45): {@code ferry serve} in front of an embedded
 * store that counts what it sends, a job driven by the Python client as a training loop (a PyTorch DataLoader with
 * 4 workers, and boto3 reading the plan's order), each epoch's egress against the store's own count, samples/s
 * against the consumer's own clock, and the same figures in the status JSON, {@code ferry status} and Prometheus.
 * And the advisor against causes built into the run: five scenarios, each with the finding it must give and those
 * it must not.
 */
class FourNumbersTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int KIB = 1024;

    @TempDir
    Path dir;
    private Path python;
    private Path repo;

    @BeforeEach
    void needsPythonWithTorch() throws Exception {
        python = Servers.onPath("python3");
        Servers.requireTool(python != null, "python3");
        Servers.requireTool(Servers.run(Duration.ofMinutes(2), Map.of(), python.toString(), "-c", "import torch, boto3").exitCode() == 0,
                "PyTorch ('torch') and boto3");
        repo = Path.of(System.getProperty("user.dir")).getParent();
    }

    /** An embedded store with a dataset, a daemon in front of it, and the Python driver that trains through it. */
    private final class Rig implements AutoCloseable {
        final EmbeddedStore store;
        final Manifest manifest;
        final Path manifestFile;
        final Process ferry;
        final String url;
        final HttpClient http = HttpClient.newHttpClient();

        /** {@code shards} objects of {@code samples} samples of {@code sampleBytes} under data/train/, and the daemon with {@code flags}. */
        Rig(String name, CloudProfile profile, int shards, int samples, int sampleBytes, String... flags) throws Exception {
            Path root = dir.resolve(name);
            // written at full speed, then served with the scenario's profile (its rate limit would throttle the writes)
            try (EmbeddedStore writer = EmbeddedStore.start(root.resolve("store"), 0, CloudProfile.none());
                    S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(writer.endpoint(), "ferry", "ferry"))) {
                s3.createBucket("data");
                manifest = SyntheticDataset.write(s3, "data", "train", shards, samples, sampleBytes, name.hashCode());
            }
            store = EmbeddedStore.start(root.resolve("store"), 0, profile);
            manifestFile = root.resolve("manifest.json");
            ManifestJson.write(manifest, name, manifestFile);
            int port = Servers.freePort();
            List<String> args = new ArrayList<>(List.of("serve", "--upstream", "http://127.0.0.1:" + store.port(), "--cache-dir",
                    root.resolve("cache").toString(), "--port", Integer.toString(port)));
            args.addAll(List.of(flags));
            ferry = Servers.ferry(root.resolve("serve.log"), Map.of("AWS_ACCESS_KEY_ID", "ferry", "AWS_SECRET_ACCESS_KEY", "ferry"),
                    args.toArray(String[]::new));
            Servers.awaitPort(port, Duration.ofSeconds(90), ferry);
            url = "http://127.0.0.1:" + port;
        }

        /** Runs the driver for {@code job} with {@code args}; returns its JSON lines. */
        List<JsonNode> drive(String job, String... args) throws Exception {
            List<String> command = new ArrayList<>(List.of(python.toString(), repo.resolve("clients/python/tests/four_numbers_e2e.py").toString(),
                    "--url", url, "--job", job, "--manifest-file", manifestFile.toString()));
            command.addAll(List.of(args));
            Servers.Result r = Servers.run(Duration.ofMinutes(5), Map.of("PYTHONPATH", repo.resolve("clients/python").toString()),
                    command.toArray(String[]::new));
            assertThat(r.exitCode()).as(r.output()).isZero();
            List<JsonNode> lines = new ArrayList<>();
            for (String line : r.output().lines().filter(l -> l.startsWith("{")).toList()) {
                lines.add(JSON.readTree(line));
            }
            return lines;
        }

        JsonNode status() throws Exception {
            return JSON.readTree(get("/_ferry/v1/status"));
        }

        String get(String path) throws Exception {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url + path)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            return r.body();
        }

        /** Waits until neither the store nor the daemon has sent a byte for a second (prefetches done); the store's count then. */
        long quietBytes() throws Exception {
            long last = -1;
            long lastEgress = -1;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline) {
                long now = store.stats().bytesServed();
                long egress = status().get("tiers").get("origin").get("egress_bytes").asLong();
                if (now == last && egress == lastEgress) {
                    return now;
                }
                last = now;
                lastEgress = egress;
                Thread.sleep(1000);
            }
            throw new AssertionError("the store still sends after a minute");
        }

        /** The job's findings as the status has them after the daemon's next refresh. */
        List<String> advice(String job) throws Exception {
            Thread.sleep(1200); // the status thread refreshes the findings each second
            List<String> out = new ArrayList<>();
            job(status(), job).get("advice").forEach(a -> out.add(a.asText()));
            return out;
        }

        @Override
        public void close() throws Exception {
            http.close();
            Servers.stop(ferry);
            store.close();
        }
    }

    static JsonNode job(JsonNode status, String name) {
        for (JsonNode j : status.get("jobs")) {
            if (j.get("job").asText().equals(name)) {
                return j;
            }
        }
        throw new AssertionError("no job " + name + " in " + status);
    }

    /** The bytes of every sample of the manifest. */
    static long sampleBytes(Manifest manifest) {
        long bytes = 0;
        for (var shard : manifest.shards()) {
            bytes += shard.sampleOffset(shard.samples()) - shard.sampleOffset(0);
        }
        return bytes;
    }

    /** The value of a Prometheus sample {@code name{job="..."}}. */
    static double metric(String body, String name, String job) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name + "{job=\"" + job + "\"") + "[^}]*\\} (\\S+)$").matcher(body);
        assertThat(m.find()).as(name + " for " + job + " in /metrics").isTrue();
        return Double.parseDouble(m.group(1));
    }

    /**
     * The new user's run (issue 45's table), repeated: the daemon as the README starts it, epochs 1 and 2 through a
     * DataLoader of 4 workers, epoch 3 read by boto3 in the plan's order. Each epoch's egress is within 2% of what the
     * store sent during it, samples/s within 5% of the consumer's own, the three parts of the hit rate add up to what
     * the consumer read, no wait share is above 1, no epoch that egressed shows 0 B; the jobs' rows and the rest add
     * up to the daemon's egress; {@code ferry status} and Prometheus show the JSON's figures.
     */
    @Test
    void theNewUsersRun_eachNumberAgreesWithTheStoreAndTheConsumer_andEveryViewShowsTheSame() throws Exception {
        // about 9.5 MiB in 8 tar shards of 100-102 samples of 8-16 KiB
        try (Rig rig = new Rig("newuser", CloudProfile.none().withFirstByteLatency(Duration.ofMillis(20)), 8, 100, 8 * KIB)) {
            long datasetBytes = rig.manifest.totalBytes();
            long before = rig.quietBytes();
            rig.drive("resnet", "--register-only");
            long[] storeBytes = new long[3];
            long[] meterBytes = new long[3];
            long meterBefore = rig.status().get("tiers").get("origin").get("egress_bytes").asLong();
            double[] consumerRate = new double[3];
            for (int e = 1; e <= 3; e++) {
                List<JsonNode> out = e < 3 ? rig.drive("resnet", "--epochs", Integer.toString(e), "--workers", "4", "--batch-size", "16")
                        : rig.drive("resnet", "--epochs", "3", "--reader", "boto3", "--batch-size", "16");
                JsonNode epoch = out.get(0);
                assertThat(epoch.get("samples").asLong()).isEqualTo(rig.manifest.totalSamples());
                consumerRate[e - 1] = epoch.get("samples").asDouble() / epoch.get("seconds").asDouble();
                long after = rig.quietBytes();
                storeBytes[e - 1] = after - before;
                before = after;
                long meterAfter = rig.status().get("tiers").get("origin").get("egress_bytes").asLong();
                meterBytes[e - 1] = meterAfter - meterBefore;
                meterBefore = meterAfter;
            }
            JsonNode status = rig.status();
            JsonNode job = job(status, "resnet");
            JsonNode epochs = job.get("epochs");
            assertThat(epochs).hasSize(3);
            long rows = 0;
            for (int e = 1; e <= 3; e++) {
                JsonNode row = epochs.get(e - 1);
                String where = "epoch " + e + ": " + row;
                long egress = row.get("egress_bytes").asLong();
                rows += egress;
                assertThat((double) egress).as(where + " egress against the store's count " + storeBytes[e - 1] + " (the daemon's meter: "
                        + meterBytes[e - 1] + "; " + status.get("tiers").get("origin") + ")")
                        .isCloseTo((double) storeBytes[e - 1], Offset.offset(0.02 * Math.max(storeBytes[e - 1], datasetBytes / 50)));
                assertThat(row.get("samples_per_s").asDouble()).as(where + " samples/s against the consumer's " + consumerRate[e - 1])
                        .isCloseTo(consumerRate[e - 1], Offset.offset(0.05 * consumerRate[e - 1]));
                assertThat(row.get("wait_share").asDouble()).as(where).isBetween(0.0, 1.0);
                assertThat(row.get("steady_wait_share").asDouble()).as(where).isBetween(0.0, 1.0);
                // the parts add up to what the consumer read (the Python client reads runs of a shard's samples, gaps
                // between them included; boto3 each sample's bytes: at least the samples')
                long parts = row.get("resident_bytes").asLong() + row.get("prefetched_bytes").asLong() + row.get("waited_bytes").asLong();
                assertThat(parts).as(where).isEqualTo(row.get("read_bytes").asLong()).isGreaterThanOrEqualTo(sampleBytes(rig.manifest));
                if (storeBytes[e - 1] > 0) {
                    assertThat(egress).as(where + ": an epoch that egressed shows it").isPositive();
                }
                assertThat(row.get("local_hit_rate_bytes").asDouble()).as(where)
                        .isCloseTo((double) row.get("resident_bytes").asLong() / parts, Offset.offset(1e-3));
            }
            assertThat(storeBytes[0]).as("epoch 1 read the dataset from the store").isGreaterThanOrEqualTo(sampleBytes(rig.manifest));
            assertThat(epochs.get(0).get("local_hit_rate_bytes").asDouble()).as("nothing was resident before epoch 1").isZero();
            assertThat(epochs.get(0).get("waited_share_bytes").asDouble() + epochs.get(0).get("prefetched_share_bytes").asDouble())
                    .isCloseTo(1.0, Offset.offset(1e-3));
            for (int e = 2; e <= 3; e++) {
                assertThat(storeBytes[e - 1]).as("the tier holds the dataset: epoch " + e + " fetched nothing").isZero();
                assertThat(epochs.get(e - 1).get("local_hit_rate_bytes").asDouble()).as("epoch " + e + " was resident").isEqualTo(1.0);
            }
            JsonNode total = status.get("jobs_total");
            assertThat(total.get("jobs_egress_bytes").asLong()).isEqualTo(rows);
            assertThat(rows + total.get("other_egress_bytes").asLong()).isEqualTo(total.get("egress_bytes").asLong());

            // the headline cards are the current epoch's row
            JsonNode four = status.get("four_numbers");
            JsonNode current = epochs.get(2);
            assertThat(four.get("job").asText()).isEqualTo("resnet");
            for (String f : List.of("samples_per_s", "local_hit_rate_bytes", "waited_share_bytes", "egress_bytes", "wait_per_step_ms_p99")) {
                assertThat(four.get(f)).as(f).isEqualTo(current.get(f));
            }
            // Prometheus: the current epoch's figures as the JSON has them
            String metrics = rig.get("/_ferry/metrics");
            assertThat(metric(metrics, "ferry_job_egress_bytes", "resnet")).isEqualTo(current.get("egress_bytes").asDouble());
            assertThat(metric(metrics, "ferry_job_samples_per_second", "resnet"))
                    .isCloseTo(current.get("samples_per_s").asDouble(), Offset.offset(0.1));
            assertThat(metric(metrics, "ferry_job_local_hit_rate", "resnet"))
                    .isCloseTo(current.get("local_hit_rate_bytes").asDouble(), Offset.offset(1e-3));
            // ferry status prints each epoch's row from the same JSON
            Servers.Result cli = Servers.run(Duration.ofMinutes(1), Map.of(),
                    Servers.javaCommand("dev.ferry.cli.Main", "status", "--url", rig.url).toArray(String[]::new));
            assertThat(cli.exitCode()).as(cli.output()).isZero();
            for (int e = 1; e <= 3; e++) {
                JsonNode row = epochs.get(e - 1);
                String line = cli.output().lines().filter(l -> l.trim().startsWith("resnet / ")).toList().get(e - 1);
                assertThat(line).as("ferry status, epoch " + (e))
                        .contains(String.format(Locale.ROOT, "%.1f %%", 100 * row.get("local_hit_rate_bytes").asDouble()))
                        .contains(String.format(Locale.ROOT, "%.1f %%", 100 * row.get("waited_share_bytes").asDouble()))
                        .contains(Sizes.format(row.get("egress_bytes").asLong()))
                        .contains(String.format(Locale.ROOT, "%.0f", row.get("samples_per_s").asDouble()));
            }
        }
    }

    /** The findings of each scenario that must appear, and those that must not. */
    private static void expect(List<String> advice, List<String> must, List<String> mustNot) {
        String all = String.join("\n", advice);
        for (String m : must) {
            assertThat(all).as("must say '" + m + "'").contains(m);
        }
        for (String m : mustNot) {
            assertThat(all).as("must not say '" + m + "'").doesNotContain(m);
        }
    }

    private static final String CPU = "Preprocessing is CPU-bound";
    private static final String OUTGREW = "The working set outgrew the node";
    private static final String STORE = "The consumer waits on the object store";
    private static final String THROTTLED = "The object store is throttling";
    private static final String SHALLOW = "Prefetch is too shallow";
    private static final String FINE = "No problem found";

    @Test
    void advisorMatrix_healthy_saysSoInOneLine() throws Exception {
        try (Rig rig = new Rig("healthy", CloudProfile.none().withFirstByteLatency(Duration.ofMillis(20)), 4, 100, 8 * KIB)) {
            // the tier holds it all; the loader keeps ahead of a 60 ms step
            rig.drive("fits", "--epochs", "1,2,3", "--workers", "2", "--batch-size", "16", "--step-ms", "60");
            expect(rig.advice("fits"), List.of(FINE), List.of(CPU, OUTGREW, STORE, THROTTLED, SHALLOW, "rising"));
        }
    }

    @Test
    void advisorMatrix_aDecodeThatBurnsCpu_isCpuBound() throws Exception {
        try (Rig rig = new Rig("cpu", CloudProfile.none().withFirstByteLatency(Duration.ofMillis(20)), 2, 100, 8 * KIB)) {
            // one worker spending 15 ms of CPU on each sample, a consumer that could take 1,600 samples/s
            rig.drive("decode", "--epochs", "1,2", "--workers", "1", "--batch-size", "8", "--decode-ms", "15", "--step-ms", "5");
            expect(rig.advice("decode"), List.of(CPU), List.of(OUTGREW, STORE, THROTTLED, SHALLOW, FINE));
        }
    }

    @Test
    void advisorMatrix_aTierAQuarterOfTheDataset_saysItOutgrewAndTheSizeThatFits() throws Exception {
        // 16 MiB in 16 shards of 64 samples of 16 KiB, a 4 MiB tier of 256 KiB blocks
        try (Rig rig = new Rig("outgrew", CloudProfile.none().withFirstByteLatency(Duration.ofMillis(5)), 16, 64, 16 * KIB,
                "--cache-size", "4MiB", "--block-size", "256KiB")) {
            rig.drive("big", "--epochs", "1,2,3", "--workers", "2", "--batch-size", "16");
            List<String> advice = rig.advice("big");
            expect(advice, List.of(OUTGREW, "A cache of", "under 10% of the dataset"), List.of(CPU, THROTTLED, FINE));
            String sizing = advice.stream().filter(a -> a.startsWith(OUTGREW)).findFirst().orElseThrow();
            Matcher m = Pattern.compile("A cache of ([0-9.]+ [KMG]i?B)").matcher(sizing);
            assertThat(m.find()).as(sizing).isTrue();
            assertThat(Sizes.parse(m.group(1).replace(" ", ""))).as("the size that fits is more than the tier it has")
                    .isGreaterThan(4L << 20).isLessThanOrEqualTo(rig.manifest.totalBytes() + (1L << 20));
        }
    }

    @Test
    void advisorMatrix_aSlowStoreWithFewReadsAhead_saysWhatToRaiseAndHowFar() throws Exception {
        // cold, 100 ms to first byte, the daemon reads nothing ahead and the loader one request at a time
        try (Rig rig = new Rig("latency", CloudProfile.none().withFirstByteLatency(Duration.ofMillis(100)), 8, 50, 16 * KIB,
                "--block-size", "256KiB", "--prefetch-bytes", "0")) {
            rig.drive("cold", "--epochs", "1", "--workers", "1", "--prefetch", "1", "--batch-size", "8");
            List<String> advice = rig.advice("cold");
            expect(advice, List.of(STORE, "first byte at 1", "reads in flight would keep up"), List.of(CPU, OUTGREW, THROTTLED, FINE));
        }
    }

    @Test
    void advisorMatrix_aPrefixOverItsLimit_isThrottling_withTheGovernorsFigures() throws Exception {
        // 120 objects of one sample under one prefix, a store that takes 20 requests/s on it (a burst of 2): the
        // daemon's prefetcher alone, 8 fetches at a time, goes over it at once, however slowly the loader runs
        try (Rig rig = new Rig("throttle", CloudProfile.none().withPrefixRequestRate(20), 120, 1, 8 * KIB)) {
            rig.drive("many", "--epochs", "1", "--workers", "2", "--batch-size", "8");
            List<String> advice = rig.advice("many");
            expect(advice, List.of(THROTTLED, "it now sends at most", "SlowDowns"), List.of(CPU, OUTGREW, FINE));
        }
    }
}
