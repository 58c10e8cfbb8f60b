package dev.ferry.serve.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.serve.DaemonFixture;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two daemons with one shared-file-system tier: the second node's read costs no egress, and status says where it came from. */
class SharedTierDaemonTest {
    /** A node over the store at {@code dir/store} with its own local tier, {@code dir/name}, and the shared tier {@code dir/mnt}. */
    private static DaemonFixture node(Path dir, String name) throws Exception {
        return DaemonFixture.overFolder(dir).with("cache-dir", dir.resolve(name)).with("shared-tier", dir.resolve("mnt"))
                .with("cache-size", "64MiB").start();
    }

    @Test
    void theSecondNodeReadsTheSharedCopy(@TempDir Path dir) throws Exception {
        Path store = Files.createDirectories(dir.resolve("store/data"));
        byte[] data = new byte[3 << 20];
        new Random(1).nextBytes(data);
        Files.write(store.resolve("shard.tar"), data);
        try (DaemonFixture a = node(dir, "a"); DaemonFixture b = node(dir, "b"); HttpClient http = HttpClient.newHttpClient()) {
            for (DaemonFixture d : new DaemonFixture[] {a, b}) {
                HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(d.endpoint().resolve("/data/shard.tar")).build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                assertThat(r.body()).isEqualTo(data);
            }
            assertThat(a.daemon.node().counters().meter().egressBytes()).isEqualTo(data.length);
            assertThat(b.daemon.node().counters().meter().egressBytes()).as("node b found the copy node a left on the shared tier").isZero();
            var status = new ObjectMapper().readTree(http.send(HttpRequest.newBuilder(b.endpoint().resolve("/_ferry/v1/status")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            assertThat(status.get("tiers").get("shared").get("bytes").asLong()).isEqualTo(data.length);
            assertThat(status.get("four_numbers").get("shared_tier_bytes").asLong()).isEqualTo(data.length);
        }
    }
}
