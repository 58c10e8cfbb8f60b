package dev.ferry.serve.node;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.TinyFileSystem;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ferry serve --write-back} with its local disk on a real, tiny file system (a 3 MiB tmpfs; mounting
 * needs root, elsewhere the test is skipped): a PUT that does not fit fails with an S3 error and nothing
 * half-written is acknowledged or uploaded; a PUT that fits (its body on the disk once) still works, and reads back.
 */
class DaemonDiskFullTest {
    @TempDir
    Path tmp;
    TinyFileSystem tiny;
    Path mount;

    @BeforeEach
    void mountTinyFileSystem() throws Exception {
        tiny = TinyFileSystem.mount(tmp.resolve("tiny"), "3m", "DaemonDiskFullTest");
        mount = tiny.path();
    }

    @AfterEach
    void unmount() throws Exception {
        if (tiny != null) {
            tiny.close();
        }
    }

    @Test
    void aPutThatDoesNotFitFailsCleanly() throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(tmp).with("cache-dir", mount.resolve("cache")).with("cache-size", "1MiB")
                .with("write-back", true).start(); HttpClient http = HttpClient.newHttpClient()) {
            Path store = ferry.root;
            for (int size : new int[] {5 << 20, 4 << 20}) { // larger than the disk: the spool fills it
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/data/big-" + size))
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[size])).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as("PUT of %d bytes: %s", size, r.body()).isEqualTo(507);
                assertThat(r.body()).contains("<Code>InsufficientStorage</Code>");
                assertThat(Files.exists(store.resolve("data/big-" + size))).isFalse();
                HttpResponse<String> get = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/data/big-" + size)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(get.statusCode()).as("nothing half-written is readable").isEqualTo(404);
            }
            // the body is on the disk once (write-back takes the spooled file over): 2 MiB fits the 3 MiB disk
            HttpResponse<String> once = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/data/once"))
                    .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[2 << 20])).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(once.statusCode()).as(once.body()).isEqualTo(200);
            HttpResponse<String> small = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/data/small"))
                    .PUT(HttpRequest.BodyPublishers.ofString("still works")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(small.statusCode()).as(small.body()).isEqualTo(200);
            assertThat(small.headers().firstValue("x-ferry-durability")).hasValue("local");
            assertThat(http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/data/small")).build(),
                    HttpResponse.BodyHandlers.ofString()).body()).isEqualTo("still works");
            HttpResponse<String> fence = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=30000"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(fence.statusCode()).as(fence.body()).isEqualTo(200);
            assertThat(Files.readString(store.resolve("data/small"))).isEqualTo("still works");
            assertThat(Files.size(store.resolve("data/once"))).isEqualTo(2 << 20);
        }
    }
}
