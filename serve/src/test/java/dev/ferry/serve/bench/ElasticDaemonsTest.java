package dev.ferry.serve.bench;

import static dev.ferry.serve.ApiHttp.JSON;
import static dev.ferry.serve.ApiHttp.getOk;
import static dev.ferry.serve.ApiHttp.postOk;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ferry.loader.SyntheticDataset;
import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.CanonicalHomes;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.serve.Daemon;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.file.FileObjectStore;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 item 5 through the daemon's own API: real daemons on loopback, a job registered over HTTP with 12
 * canonical nodes, each node's consumer reading its order ({@code GET .../order}) through its own daemon. Epoch 1
 * on the old world warms the tiers (each holds more than its share); halfway through epoch 2 (inside a round) the
 * job asks the daemon for its checkpoint ({@code GET .../checkpoint}), the world changes (4 -> 3: the last daemon
 * leaves; 3 -> 4: a fresh daemon joins), every daemon of the new world is re-registered with {@code resume} set
 * to that checkpoint, and the job reads the rest of epoch 2 and epoch 3. The extra egress is what the daemons
 * fetched from the origin in epochs 2 and 3, against the share that had to move; epoch 2 is checked sample by
 * sample (every sample read once, but the new world's padding).
 */
class ElasticDaemonsTest {
    private static final int CANONICAL = 12;
    /** Blocks of 64 KiB, a sample or two (shards are 16 samples of 16-32 KiB): see the class note on reads that leave their node. */
    static final int BLOCK = 64 << 10;

    record Change(long extraEgress, long mustMove, int moved, long missing, long extra, long padding) {
        double ratio() {
            return (double) extraEgress / mustMove;
        }
    }

    @Test
    void fourToThree_withTheCheckpointsHomes_movesOnlyTheDepartedShare_exactly(@TempDir Path dir) throws Exception {
        Change c = change(dir, 4, 3, true);
        assertThat(c.moved()).as("the departed node's 3 canonical nodes move").isEqualTo(3);
        assertThat(c.missing()).isZero();
        assertThat(c.extra()).as("reads beyond one per sample: the padding only").isEqualTo(c.padding());
        assertThat(c.ratio()).as("4 -> 3: %s", c).isLessThanOrEqualTo(1.1);
        System.out.printf("daemons 4 -> 3, homes carried: extra egress %d bytes, %.3fx the departed share (%d bytes)%n", c.extraEgress(),
                c.ratio(), c.mustMove());
    }

    @Test
    void threeToFour_withTheCheckpointsHomes_movesOnlyTheNewNodesQuarter_exactly(@TempDir Path dir) throws Exception {
        Change c = change(dir, 3, 4, true);
        assertThat(c.moved()).as("the new node takes 3 of 12").isEqualTo(3);
        assertThat(c.missing()).isZero();
        assertThat(c.extra()).isEqualTo(c.padding());
        assertThat(c.ratio()).as("3 -> 4: %s", c).isLessThanOrEqualTo(1.1);
        System.out.printf("daemons 3 -> 4, homes carried: extra egress %d bytes, %.3fx the new node's share (%d bytes)%n", c.extraEgress(),
                c.ratio(), c.mustMove());
    }

    @Test
    void fourToThree_withoutHomes_isDealtCModNodes_andMovesThreeQuarters(@TempDir Path dir) throws Exception {
        Change c = change(dir, 4, 3, false);
        assertThat(c.moved()).as("c mod 3 moves 9 of 12").isEqualTo(9);
        assertThat(c.missing()).isZero();
        assertThat(c.ratio()).as("without homes: %s", c).isGreaterThan(2.0);
        System.out.printf("daemons 4 -> 3, no homes (c mod 3): extra egress %.3fx the departed share%n", c.ratio());
    }

    static Change change(Path dir, int from, int to, boolean carryHomes) throws Exception {
        Path root = dir.resolve("origin");
        Manifest manifest;
        try (FileObjectStore origin = new FileObjectStore(root)) {
            origin.createBucket("data");
            manifest = SyntheticDataset.write(origin, "data", "train", 48, 16, 16 * 1024, 5);
        }
        Path manifestFile = dir.resolve("manifest.json");
        ManifestJson.write(manifest, "test", manifestFile);
        JsonNode manifestJson = JSON.readTree(Files.readAllBytes(manifestFile));
        int most = Math.max(from, to);
        List<Daemon> daemons = new ArrayList<>();
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            for (int i = 0; i < most; i++) {
                // 10 MiB of tier against a share of about 5 MiB: a node keeps all it reads, so only movement costs egress
                daemons.add(DaemonFixture.overFolder(dir).with("store-root", root).with("cache-dir", dir.resolve("cache-" + i))
                        .with("cache-size", 10L << 20).with("block-size", BLOCK).with("prefetch-bytes", 0).start().daemon);
            }
            for (int i = 0; i < from; i++) {
                ObjectNode reg = registration(manifestJson, from, i);
                JsonNode answer = post(http, daemons.get(i), reg);
                assertThat(answer.path("homes").path("node_of").size()).isEqualTo(CANONICAL);
            }
            int size = (int) manifest.totalSamples();
            read(http, daemons, from, 1, 0, Integer.MAX_VALUE, null);
            long before = egress(daemons);
            int[] reads = new int[size];
            int steps = (size + from - 1) / from;
            int half = steps / 2 + 1; // inside a round: its rest follows the old world's order
            read(http, daemons, from, 2, 0, half, reads);
            long consumed = (long) half * from;
            JsonNode checkpoint = get(http, daemons.get(0), "jobs/elastic/checkpoint?epoch=2&position=" + consumed);
            assertThat(checkpoint.get("position").asLong()).isEqualTo(consumed);
            long departedEgress = 0;
            for (int i = to; i < from; i++) {
                departedEgress += daemons.get(i).node().counters().meter().egressBytes();
                daemons.get(i).close(); // the departed node and its tier
            }
            int moved = -1;
            for (int i = 0; i < to; i++) {
                ObjectNode reg = registration(manifestJson, to, i).put("replace", true);
                if (carryHomes) {
                    reg.set("resume", checkpoint);
                }
                JsonNode answer = post(http, daemons.get(i), reg);
                assertThat(answer.get("canonical_nodes").asInt()).isEqualTo(CANONICAL);
                moved = carryHomes ? answer.get("moved_canonical_nodes").asInt()
                        : CanonicalHomes.of(CANONICAL, from).moved(homes(answer.get("homes")));
            }
            int rest = (int) ((size - consumed + to - 1) / to);
            read(http, daemons, to, 2, consumed, Integer.MAX_VALUE, reads);
            read(http, daemons, to, 3, 0, Integer.MAX_VALUE, null);
            long extraEgress = egress(daemons.subList(0, to)) + departedEgress - before;
            long missing = 0;
            long extra = 0;
            for (int r : reads) {
                missing += r == 0 ? 1 : 0;
                extra += Math.max(0, r - 1);
            }
            // the share that had to move: the departed node's canonical nodes, or those the new node takes
            CanonicalHomes old = CanonicalHomes.of(CANONICAL, from);
            CanonicalHomes next = old.resized(to);
            int[] home = EpochPlan.assignment(manifest, CANONICAL);
            long mustMove = 0;
            for (int s = 0; s < home.length; s++) {
                boolean moves = to < from ? old.nodeOf(home[s]) >= to : next.nodeOf(home[s]) >= from;
                mustMove += moves ? manifest.shards().get(s).size() : 0;
            }
            return new Change(extraEgress, mustMove, moved, missing, extra, (long) rest * to - (size - consumed));
        } finally {
            for (Daemon d : daemons) {
                d.close();
            }
        }
    }

    static ObjectNode registration(JsonNode manifest, int nodes, int node) {
        ObjectNode reg = JSON.createObjectNode().put("job", "elastic").put("seed", 7).put("partition", "node").put("canonical_nodes", CANONICAL)
                .put("node", node).put("batch_size", 1);
        reg.set("manifest", manifest);
        reg.putObject("world").put("nodes", nodes).put("ranks_per_node", 1).put("workers_per_rank", 1);
        return reg;
    }

    static CanonicalHomes homes(JsonNode h) {
        int[] at = new int[h.get("node_of").size()];
        for (int c = 0; c < at.length; c++) {
            at[c] = h.get("node_of").get(c).asInt();
        }
        return CanonicalHomes.parse(at, h.get("nodes").asInt());
    }

    /** Every node's consumer reads up to {@code steps} entries of its order of {@code epoch} from {@code start}, through its daemon. */
    static void read(HttpClient http, List<Daemon> daemons, int nodes, int epoch, long start, int steps, int[] reads) throws Exception {
        for (int n = 0; n < nodes; n++) {
            Daemon d = daemons.get(n);
            JsonNode order = get(http, d, "jobs/elastic/order?form=samples&epoch=" + epoch + "&rank=" + n + "&start=" + start);
            JsonNode samples = order.get("samples");
            for (int t = 0; t < Math.min(steps, samples.size()); t++) {
                JsonNode s = samples.get(t);
                long offset = s.get("offset").asLong();
                long length = s.get("length").asLong();
                HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(d.endpoint().resolve("/" + s.get("bucket").asText() + "/" + s.get("key").asText()))
                        .header("Range", "bytes=" + offset + "-" + (offset + length - 1)).header("If-Match", "\"" + s.get("etag").asText() + "\"")
                        .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofByteArray());
                assertThat(r.statusCode()).isEqualTo(206);
                assertThat(r.body()).hasSize((int) length);
                if (reads != null) {
                    reads[s.get("index").asInt()]++;
                }
            }
        }
    }

    static long egress(List<Daemon> daemons) {
        long sum = 0;
        for (Daemon d : daemons) {
            sum += d.node().counters().meter().egressBytes();
        }
        return sum;
    }

    static JsonNode post(HttpClient http, Daemon d, JsonNode body) throws Exception {
        return postOk(http, d.endpoint().resolve("/_ferry/v1/jobs"), body.toString());
    }

    static JsonNode get(HttpClient http, Daemon d, String path) throws Exception {
        return getOk(http, d.endpoint().resolve("/_ferry/v1/" + path));
    }
}
