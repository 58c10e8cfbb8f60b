package dev.ferry.serve.node;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.StoreCredentials;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * An upstream URL given with {@code user:password} in it (issue 44 item 4): the daemon works, and the password is
 * on none of what anyone can read without credentials (the status page and answer).
 */
@ExtendWith(StoreCredentials.class)
class UpstreamCredentialsTest {
    @Test
    void aPasswordInTheUpstreamUrl_isShownNowhere(@TempDir Path dir) throws Exception {
        try (EmbeddedStore store = EmbeddedStore.start(dir.resolve("origin"), 0, CloudProfile.none());
                DaemonFixture ferry = DaemonFixture.overUpstream(URI.create("http://admin:hunter2secret@127.0.0.1:" + store.endpoint().getPort()), dir)
                        .start();
                S3Client s3 = ferry.sdk("a", "b");
                HttpClient http = HttpClient.newHttpClient()) {
            s3.createBucket(b -> b.bucket("data"));
            s3.putObject(b -> b.bucket("data").key("k"), RequestBody.fromString("works"));
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("k")).asUtf8String()).isEqualTo("works");
            for (String path : new String[] {"/_ferry/v1/status", "/_ferry/", "/metrics"}) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve(path)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.body()).as(path).doesNotContain("hunter2secret").doesNotContain("admin:");
            }
            String status = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/status")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(status).contains("***@127.0.0.1:" + store.endpoint().getPort());
            assertThat(ferry.daemon.config().describe().get("upstream")).doesNotContain("hunter2secret");
        }
    }
}
