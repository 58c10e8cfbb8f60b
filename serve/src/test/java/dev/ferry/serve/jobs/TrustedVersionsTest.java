package dev.ferry.serve.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.Shard;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.ObjectKey;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Small objects of a registered job are read warm with no request to the object store, however old the
 * cache's metadata (issue 26): the manifest pins their versions. Objects no job names still revalidate, and a
 * write through ferry is read back at once.
 */
class TrustedVersionsTest {
    static final int OBJECTS = 40;

    @Test
    void registeredJobsObjects_warmReads_askTheStoreNothing(@TempDir Path dir) throws Exception {
        // metadata-ttl 0: without the job's manifest, every read would ask the store first
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("metadata-ttl", "0s").with("prefetch-bytes", "0").start();
                S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            Random random = new Random(26);
            List<Shard> shards = new ArrayList<>();
            List<byte[]> contents = new ArrayList<>();
            for (int i = 0; i < OBJECTS; i++) {
                byte[] data = new byte[8192 + random.nextInt(24_000)];
                random.nextBytes(data);
                contents.add(data);
                Files.write(ferry.root.resolve("data/img-" + i + ".jpg"), data);
                ObjectKey key = ObjectKey.of("data", "img-" + i + ".jpg");
                shards.add(new Shard(key, data.length, ferry.daemon.node().stack().cache().head(key).etag(), 1));
            }
            byte[] outsider = new byte[5000];
            random.nextBytes(outsider);
            Files.write(ferry.root.resolve("data/not-in-the-manifest.bin"), outsider);
            Path manifest = dir.resolve("manifest.json");
            ManifestJson.write(new Manifest(shards), "test", manifest);
            Files.copy(manifest, ferry.root.resolve("data/manifest.json"));
            HttpResponse<String> reg = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/jobs"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"job\":\"images\",\"manifest_key\":\"data/manifest.json\",\"seed\":1,"
                            + "\"batch_size\":4}")).header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
            assertThat(reg.statusCode()).as(reg.body()).isEqualTo(200);

            readAll(s3, contents); // epoch 1: cold, fetched
            long before = requests(ferry);
            readAll(s3, contents); // epoch 2: warm
            readAll(s3, contents); // epoch 3
            assertThat(requests(ferry) - before).as("requests to the store in two warm epochs of a registered job").isZero();

            // the contrast: an object no job names asks the store on every read at metadata-ttl 0
            s3.getObjectAsBytes(b -> b.bucket("data").key("not-in-the-manifest.bin"));
            long outside = requests(ferry);
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("not-in-the-manifest.bin")).asByteArray()).isEqualTo(outsider);
            assertThat(requests(ferry) - outside).as("a warm read of an object no job names revalidates").isPositive();

            // read-after-write through ferry holds for a trusted key
            byte[] rewritten = "a new version, written through ferry".getBytes();
            s3.putObject(b -> b.bucket("data").key("img-3.jpg"), RequestBody.fromBytes(rewritten));
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("img-3.jpg")).asByteArray()).isEqualTo(rewritten);
        }
    }

    private static void readAll(S3Client s3, List<byte[]> contents) {
        for (int i = 0; i < contents.size(); i++) {
            int n = i;
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("img-" + n + ".jpg")).asByteArray()).as("img-%d", n)
                    .isEqualTo(contents.get(n));
        }
    }

    /** Requests the daemon made to the object store, HEADs and GETs alike, as its status reports them. */
    private static long requests(DaemonFixture ferry) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            String body = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/status")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            var byOp = new com.fasterxml.jackson.databind.ObjectMapper().readTree(body).path("tiers").path("origin").path("requests_by_op");
            assertThat(byOp.has("head") && byOp.has("get")).as(body).isTrue();
            return byOp.get("head").asLong() + byOp.get("get").asLong();
        }
    }
}
