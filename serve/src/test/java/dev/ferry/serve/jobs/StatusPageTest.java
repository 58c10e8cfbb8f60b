package dev.ferry.serve.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The status page at {@code /_ferry/}: its data comes from addresses relative to its own, so it must be loaded from there. */
class StatusPageTest {
    @Test
    void withoutTheTrailingSlash_redirectsToThePage_whoseRelativeApiAnswers(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).start();
                HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build()) {
            HttpResponse<String> bare = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(bare.statusCode()).isEqualTo(301);
            assertThat(bare.headers().firstValue("Location")).hasValue("/_ferry/");

            URI page = ferry.endpoint().resolve(bare.headers().firstValue("Location").orElseThrow());
            HttpResponse<String> html = http.send(HttpRequest.newBuilder(page).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(html.statusCode()).isEqualTo(200);
            assertThat(html.body()).contains("fetch(\"v1/status\")");
            HttpResponse<String> api = http.send(HttpRequest.newBuilder(page.resolve("v1/status")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(api.statusCode()).isEqualTo(200);
            assertThat(api.body()).contains("\"four_numbers\"");
        }
    }
}
