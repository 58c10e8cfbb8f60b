package dev.ferry.serve.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.Shard;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.ObjectKey;
import dev.ferry.time.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ferry's own API: a job registers its plan, loader workers ask for their samples, consumers report
 * progress and waits, and the daemon prefetches ahead of the position and reports the four numbers.
 */
class PlanApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode call(HttpClient http, URI uri, String method, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri);
        b = body == null ? b.method(method, HttpRequest.BodyPublishers.noBody())
                : b.method(method, HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json");
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("%s %s: %s", method, uri, r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    @Test
    void aRegisteredPlanIsServedPrefetchedAndMeasured(@TempDir Path dir) throws Exception {
        // 8 shards of 16 samples of 64 KiB: 8 MiB, 1 MiB blocks
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("prefetch-bytes", "4MiB").start();
                HttpClient http = HttpClient.newHttpClient()) {
            List<Shard> shards = new ArrayList<>();
            Random random = new Random(1);
            for (int i = 0; i < 8; i++) {
                byte[] data = new byte[16 * 65536];
                random.nextBytes(data);
                Files.write(ferry.root.resolve("data/shard-" + i + ".bin"), data);
                ObjectKey key = ObjectKey.of("data", "shard-" + i + ".bin");
                shards.add(new Shard(key, data.length, ferry.daemon.node().stack().cache().head(key).etag(), 16));
            }
            Path manifestFile = dir.resolve("manifest.json");
            ManifestJson.write(new Manifest(shards), "test", manifestFile);
            Files.copy(manifestFile, ferry.root.resolve("data/manifest.json"));
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            JsonNode reg = call(http, api.resolve("jobs"), "POST", "{\"job\":\"train\",\"manifest_key\":\"data/manifest.json\",\"seed\":7,"
                    + "\"world\":{\"nodes\":1,\"ranks_per_node\":2,\"workers_per_rank\":1},\"batch_size\":4}");
            long missesAtRegistration = ferry.daemon.node().stack().cache().stats().misses(); // the manifest's read
            assertThat(reg.get("samples").asInt()).isEqualTo(128);
            assertThat(reg.get("steps_per_epoch").asInt()).isEqualTo(16); // 64 samples per rank in batches of 4

            // two workers of rank 0 together read the rank's samples, each batch by one worker, round robin
            List<Integer> rank = indexes(call(http, api.resolve("jobs/train/order?epoch=1&rank=0"), "GET", null));
            List<Integer> w0 = indexes(call(http, api.resolve("jobs/train/order?epoch=1&rank=0&worker=0&workers=2"), "GET", null));
            List<Integer> w1 = indexes(call(http, api.resolve("jobs/train/order?epoch=1&rank=0&worker=1&workers=2"), "GET", null));
            assertThat(rank).hasSize(64);
            List<Integer> dealt = new ArrayList<>();
            for (int batch = 0; batch < 16; batch++) {
                List<Integer> from = batch % 2 == 0 ? w0 : w1;
                dealt.addAll(from.subList((batch / 2) * 4, (batch / 2) * 4 + 4));
            }
            assertThat(dealt).isEqualTo(rank);
            List<Integer> other = indexes(call(http, api.resolve("jobs/train/order?epoch=1&rank=1"), "GET", null));
            Set<Integer> all = new HashSet<>(rank);
            all.addAll(other);
            assertThat(all).hasSize(128);
            List<Integer> nextEpoch = indexes(call(http, api.resolve("jobs/train/order?epoch=2&rank=0"), "GET", null));
            assertThat(nextEpoch).isNotEqualTo(rank);

            // the prefetcher fetches ahead of position 0 without any read: 4 MiB of planned blocks
            Await.until("4 MiB prefetched with no read", Duration.ofSeconds(30),
                    () -> ferry.daemon.node().stack().cache().stats().prefetchedBytes() >= (4L << 20));
            assertThat(ferry.daemon.node().stack().cache().stats().misses()).as("prefetch is not counted as a reader's miss")
                    .isEqualTo(missesAtRegistration);

            // a consumer reads its first samples (hits: prefetched) and reports its waits
            List<JsonNode> first = samples(call(http, api.resolve("jobs/train/order?epoch=1&rank=0"), "GET", null));
            for (int i = 0; i < 4; i++) {
                JsonNode s = first.get(i);
                HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/data/" + s.get("key").asText()))
                        .header("Range", "bytes=" + s.get("offset").asLong() + "-" + (s.get("offset").asLong() + s.get("length").asLong() - 1))
                        .build(), HttpResponse.BodyHandlers.ofByteArray());
                assertThat(r.statusCode()).isEqualTo(206);
                assertThat(r.body()).hasSize(65536);
            }
            call(http, api.resolve("jobs/train/progress"), "POST",
                    "{\"rank\":0,\"epoch\":1,\"position\":8,\"samples\":8,\"waits_ms\":[12.5, 0.5]}");
            JsonNode status = call(http, api.resolve("status"), "GET", null);
            JsonNode epoch = status.get("jobs").get(0).get("epochs").get(0);
            assertThat(epoch.get("samples").asLong()).isEqualTo(8);
            assertThat(epoch.get("steps").asLong()).isEqualTo(2);
            assertThat(epoch.get("wait_per_step_ms_p99").asDouble()).isBetween(12.0, 13.0);
            // prefetched after the epoch began, there before the reads: not resident before (the headline), not waited for
            assertThat(epoch.get("local_hit_rate").asDouble()).isEqualTo(0.0);
            assertThat(epoch.get("prefetched_share_bytes").asDouble()).isEqualTo(1.0);
            assertThat(epoch.get("waited_share_bytes").asDouble()).isEqualTo(0.0);
            assertThat(status.get("four_numbers").get("job").asText()).isEqualTo("train");
            JsonNode prefetch = status.get("jobs").get(0).get("prefetch");
            assertThat(prefetch.get("bytes").asLong()).as("the prefetcher's own account: %s", prefetch).isGreaterThanOrEqualTo(4L << 20);
            assertThat(prefetch.get("started_blocks").asLong()).isPositive();
            assertThat(prefetch.get("failed_blocks").asLong()).isZero();
            assertThat(status.get("four_numbers").get("egress_bytes").asLong()).isGreaterThanOrEqualTo(4L << 20);

            // a report from the next epoch opens it
            call(http, api.resolve("jobs/train/progress"), "POST", "{\"rank\":0,\"epoch\":2,\"position\":2,\"samples\":2,\"waits_ms\":[1]}");
            JsonNode later = call(http, api.resolve("status"), "GET", null).get("jobs").get(0);
            assertThat(later.get("epoch").asInt()).isEqualTo(2);
            assertThat(later.get("epochs")).hasSize(2);

            HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.body()).contains("ferry_loader_wait_seconds").contains("ferry_cache_requests_total");
            HttpResponse<String> page = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(page.body()).contains("<title>ferry status</title>");
        }
    }

    @Test
    void anExplicitKeyListPerRank(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).start(); HttpClient http = HttpClient.newHttpClient()) {
            for (String k : List.of("a", "b", "c")) {
                Files.writeString(ferry.root.resolve("data/" + k), k.repeat(10));
            }
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            call(http, api.resolve("jobs"), "POST", "{\"job\":\"eval\",\"ranks\":[[\"data/c\",\"data/a\"],[\"data/b\"]]}");
            List<JsonNode> order = samples(call(http, api.resolve("jobs/eval/order?rank=0"), "GET", null));
            assertThat(order.get(0).get("key").asText()).isEqualTo("c");
            assertThat(order.get(1).get("key").asText()).isEqualTo("a");
            assertThat(order.get(1).get("length").asLong()).isEqualTo(10);
        }
    }

    @Test
    void aJobOfTwoNodes_getsTheNodePartition_eachNodeItsOwnShards(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("prefetch-bytes", "0").start();
                HttpClient http = HttpClient.newHttpClient()) {
            List<Shard> shards = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                Files.write(ferry.root.resolve("data/s-" + i + ".bin"), new byte[16 * 1024]);
                ObjectKey key = ObjectKey.of("data", "s-" + i + ".bin");
                shards.add(new Shard(key, 16 * 1024, ferry.daemon.node().stack().cache().head(key).etag(), 16));
            }
            Path file = dir.resolve("m.json");
            ManifestJson.write(new Manifest(shards), "test", file);
            String manifest = Files.readString(file);
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            JsonNode reg = call(http, api.resolve("jobs"), "POST", "{\"job\":\"two\",\"manifest\":" + manifest + ",\"seed\":3,"
                    + "\"world\":{\"nodes\":2,\"ranks_per_node\":1,\"workers_per_rank\":1},\"node\":0,\"batch_size\":4}");
            assertThat(reg.get("partition").asText()).isEqualTo("node");
            assertThat(reg.get("canonical_nodes").asInt()).isEqualTo(2);
            assertThat(reg.get("global_batch_shard_mix").asDouble()).isPositive().isLessThan(2.0); // a stratified batch may beat chance
            Set<String> node0 = new HashSet<>();
            Set<String> node1 = new HashSet<>();
            samples(call(http, api.resolve("jobs/two/order?epoch=1&rank=0"), "GET", null)).forEach(x -> node0.add(x.get("key").asText()));
            samples(call(http, api.resolve("jobs/two/order?epoch=1&rank=1"), "GET", null)).forEach(x -> node1.add(x.get("key").asText()));
            assertThat(node0).hasSize(4).doesNotContainAnyElementsOf(node1);
            assertThat(node1).hasSize(4);
            JsonNode global = call(http, api.resolve("jobs"), "POST", "{\"job\":\"g\",\"manifest\":" + manifest + ",\"partition\":\"global\","
                    + "\"world\":{\"nodes\":2,\"ranks_per_node\":1,\"workers_per_rank\":1},\"batch_size\":4}");
            assertThat(global.get("partition").asText()).isEqualTo("global");
            HttpResponse<String> bad = http.send(HttpRequest.newBuilder(api.resolve("jobs")).POST(HttpRequest.BodyPublishers.ofString(
                    "{\"job\":\"b\",\"manifest\":" + manifest + ",\"partition\":\"rank\"}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(bad.body()).contains("partition must be node, global or auto");
            JsonNode status = call(http, ferry.endpoint().resolve("/_ferry/v1/status"), "GET", null);
            assertThat(status.get("jobs").findValuesAsText("partition")).contains("node", "global");
        }
    }

    private static List<Integer> indexes(JsonNode order) {
        List<Integer> out = new ArrayList<>();
        samples(order).forEach(s -> out.add(s.get("index").asInt()));
        return out;
    }

    /** The samples of an order answer's spans, in order, each in the older one-object-per-sample form. */
    private static List<JsonNode> samples(JsonNode order) {
        assertThat(order.has("samples")).as("the default form has spans, not samples").isFalse();
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode span : order.get("spans")) {
            for (JsonNode s : span.get("samples")) {
                out.add(JSON.createObjectNode().put("index", s.get(0).asInt()).put("bucket", span.get("bucket").asText())
                        .put("key", span.get("key").asText()).put("offset", s.get(1).asLong()).put("length", s.get(2).asLong())
                        .put("etag", span.get("etag").asText()));
            }
        }
        assertThat(out).hasSize(order.get("sample_count").asInt());
        return out;
    }

    /**
     * The order comes as spans: each a run of consecutive samples of one object with the range that covers them,
     * no two neighbours of the same object; the same samples as the older form ({@code form=samples}), in order.
     */
    @Test
    void theOrderComesAsSpans_runsOfOneObject_theSameSamplesAsTheOlderForm(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("prefetch-bytes", "0").start();
                HttpClient http = HttpClient.newHttpClient()) {
            List<Shard> shards = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                Files.write(ferry.root.resolve("data/s-" + i), new byte[10 * 1000]);
                ObjectKey key = ObjectKey.of("data", "s-" + i);
                shards.add(new Shard(key, 10 * 1000, ferry.daemon.node().stack().cache().head(key).etag(), 10));
            }
            Path file = dir.resolve("m.json");
            ManifestJson.write(new Manifest(shards), "test", file);
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            // a shuffle block of one shard: each shard's samples together in the order, shuffled among themselves
            call(http, api.resolve("jobs"), "POST", "{\"job\":\"spans\",\"manifest\":" + Files.readString(file)
                    + ",\"seed\":5,\"shuffle_block_shards\":1,\"batch_size\":8}");
            for (String query : List.of("epoch=1&rank=0", "epoch=2&rank=0&worker=1&workers=3", "epoch=1&rank=0&start=17")) {
                JsonNode spans = call(http, api.resolve("jobs/spans/order?" + query), "GET", null);
                JsonNode old = call(http, api.resolve("jobs/spans/order?form=samples&" + query), "GET", null);
                assertThat(old.has("spans")).isFalse();
                List<JsonNode> flat = samples(spans);
                List<String> expected = new ArrayList<>();
                old.get("samples").forEach(s -> expected.add(s.toString()));
                assertThat(flat.stream().map(JsonNode::toString).toList()).as(query).isEqualTo(expected);
                assertThat(spans.get("spans").size()).as("%s: far fewer spans than samples", query).isLessThan(flat.size() / 3);
                JsonNode previous = null;
                for (JsonNode span : spans.get("spans")) {
                    if (previous != null) {
                        assertThat(span.get("key").asText()).as("neighbours read other objects").isNotEqualTo(previous.get("key").asText());
                    }
                    long from = Long.MAX_VALUE;
                    long to = 0;
                    for (JsonNode s : span.get("samples")) {
                        from = Math.min(from, s.get(1).asLong());
                        to = Math.max(to, s.get(1).asLong() + s.get(2).asLong());
                    }
                    assertThat(span.get("offset").asLong()).isEqualTo(from);
                    assertThat(span.get("length").asLong()).isEqualTo(to - from);
                    previous = span;
                }
            }
            HttpResponse<String> bad = http.send(HttpRequest.newBuilder(api.resolve("jobs/spans/order?form=rows")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(bad.body()).contains("form must be spans or samples");
        }
    }

    /** A node whose share outgrows its tier gets the shuffle block the tier can serve, unless the job names one. */
    @Test
    void theShuffleBlock_fitsTheTier_unlessTheJobNamesOne(@TempDir Path dir) throws Exception {
        // 8 shards of 1 MiB on one node with a 4 MiB tier: the share (8 MiB) outgrows it, a quarter holds 1 shard
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("cache-size", "4MiB").with("prefetch-bytes", "0").start();
                HttpClient http = HttpClient.newHttpClient()) {
            List<Shard> shards = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                Files.write(ferry.root.resolve("data/s-" + i), new byte[1 << 20]);
                ObjectKey key = ObjectKey.of("data", "s-" + i);
                shards.add(new Shard(key, 1 << 20, ferry.daemon.node().stack().cache().head(key).etag(), 16));
            }
            ManifestJson.write(new Manifest(shards), "test", ferry.root.resolve("data/manifest.json"));
            URI jobs = ferry.endpoint().resolve("/_ferry/v1/jobs");
            JsonNode fitted = call(http, jobs, "POST", "{\"job\":\"a\",\"manifest_key\":\"data/manifest.json\",\"batch_size\":4}");
            assertThat(fitted.get("shuffle_block_shards").asInt()).as(fitted.toString()).isEqualTo(1);
            JsonNode named = call(http, jobs, "POST", "{\"job\":\"b\",\"manifest_key\":\"data/manifest.json\",\"batch_size\":4,"
                    + "\"shuffle_block_shards\":4}");
            assertThat(named.get("shuffle_block_shards").asInt()).isEqualTo(4);
        }
    }
}
