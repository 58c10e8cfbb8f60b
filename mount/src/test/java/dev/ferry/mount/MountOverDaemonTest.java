package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.cache.CacheStats;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.Shard;
import dev.ferry.s3client.S3Credentials;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.serve.Daemon;
import dev.ferry.serve.ServeConfig;
import dev.ferry.store.ObjectKey;
import dev.ferry.time.Clock;
import java.io.InputStream;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plans through the mount: {@code ferry mount --upstream DAEMON --cache-size 0} over a real daemon
 * ({@link Daemon}, over a folder store), a job registered with the daemon's API by the Python client, and its
 * loader (python3) reading the plan's samples as files of the mount, in plan order, reporting progress. The
 * daemon prefetches by the plan and serves the mount's reads from its tier; the mount keeps no tier of its own.
 */
class MountOverDaemonTest {
    static final int BLOCK = 1 << 20;
    static final int SHARDS = 8;
    static final int SAMPLES = 16;
    static final int SAMPLE_BYTES = 64 << 10; // a shard is one 1 MiB block

    @Test
    void aPlannedJobReadThroughTheMount_isPrefetchedByTheDaemon_withTheEgressItPredicted(@TempDir Path dir) throws Exception {
        Tools.requireFuse();
        Path root = Files.createDirectories(dir.resolve("store/data"));
        Random random = new Random(5);
        for (int i = 0; i < SHARDS; i++) {
            byte[] b = new byte[SAMPLES * SAMPLE_BYTES];
            random.nextBytes(b);
            Files.write(root.resolve("shard-" + i + ".bin"), b);
        }
        ServeConfig serve = ServeConfig.defaults().with(Map.of("store-root", dir.resolve("store").toString(), "cache-dir",
                dir.resolve("daemon-cache").toString(), "port", "0", "cache-size", "64MiB", "block-size", "1MiB", "prefetch-bytes", "4MiB"));
        try (Daemon daemon = Daemon.start(serve); HttpClient http = HttpClient.newHttpClient()) {
            Path manifest = dir.resolve("manifest.json");
            ManifestJson.write(manifest(daemon.endpoint()), "MountOverDaemonTest", manifest);
            Path mp = Files.createDirectories(dir.resolve("mp"));
            MountConfig config = MountConfig.from(Map.of("mountpoint", mp.toString(), "upstream", daemon.endpoint().toString(),
                    "cache-size", "0", "cache-dir", dir.resolve("mount-cache").toString()));
            Path script = dir.resolve("plan_loader.py");
            try (InputStream in = MountOverDaemonTest.class.getResourceAsStream("plan_loader.py")) {
                Files.copy(in, script);
            }
            Tools.Result r;
            try (Mount mount = Mount.start(config, Clock.system(), s -> { })) {
                assertThat(mount.stack().cache()).as("no local tier of the mount's own").isNull();
                Path repo = Path.of(System.getProperty("user.dir")).getParent();
                r = Tools.run("env", "PYTHONPATH=" + repo.resolve("clients/python"), "python3", script.toString(),
                        daemon.endpoint().toString(), "mounted", manifest.toString(), mp.toString(), dir.resolve("store").toString(),
                        "2", "4", Integer.toString(BLOCK));
            }
            assertThat(r.exitCode()).as(r.output()).isZero();
            JsonNode out = new ObjectMapper().readTree(r.output().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow());
            assertThat(out.get("samples").toString()).isEqualTo("[128,128]");

            long dataset = (long) SHARDS * SAMPLES * SAMPLE_BYTES;
            long predicted = out.get("predicted_egress_bytes").get(0).asLong() + out.get("predicted_egress_bytes").get(1).asLong();
            assertThat(predicted).as("the plan fits the daemon's tier: the dataset once, in epoch 1").isEqualTo(dataset);
            JsonNode status = get(http, daemon.endpoint().resolve("/_ferry/v1/status"));
            long egress = status.get("tiers").get("origin").get("egress_bytes").asLong();
            assertThat(egress).as("the daemon's egress for the job read through the mount vs its prediction").isEqualTo(predicted);

            CacheStats c = daemon.node().counters().cache();
            // the loader started once the plan's first block was prefetched, so its first read was a hit at least
            assertThat(c.prefetchedBytes()).as("prefetched by the plan").isGreaterThanOrEqualTo(BLOCK);
            assertThat(c.hits()).as("reads served from what the plan prefetched").isPositive();
            JsonNode epochs = status.get("jobs").get(0).get("epochs");
            // epoch 2 is served on this node (the kernel's page cache of the mount, else the daemon's tier)
            assertThat(epochs.get(1).get("egress_bytes").asLong()).as("epoch 2: " + epochs.get(1)).isZero();
            assertThat(epochs.get(1).get("samples").asLong()).isEqualTo(128);
            assertThat(dir.resolve("mount-cache")).as("the mount cached nothing itself").doesNotExist();
        }
    }

    /** The shards with their ETags as the daemon reports them. */
    static Manifest manifest(URI endpoint) throws Exception {
        List<Shard> shards = new ArrayList<>();
        try (S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(endpoint, S3Credentials.PLACEHOLDER))) {
            for (int i = 0; i < SHARDS; i++) {
                ObjectKey key = ObjectKey.of("data", "shard-" + i + ".bin");
                shards.add(new Shard(key, (long) SAMPLES * SAMPLE_BYTES, s3.head(key).etag(), SAMPLES));
            }
        }
        return new Manifest(shards);
    }

    static JsonNode get(HttpClient http, URI uri) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return new ObjectMapper().readTree(r.body());
    }
}
