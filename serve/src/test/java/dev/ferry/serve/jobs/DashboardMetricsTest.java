package dev.ferry.serve.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.Shard;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.ObjectKey;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped Grafana dashboard (ops/grafana) and Prometheus alert rules (ops/prometheus) query only
 * metrics a running daemon exports: every {@code ferry_*} name in their expressions is on a real daemon's
 * /_ferry/metrics once a job has registered and reported.
 */
class DashboardMetricsTest {
    private static final Pattern METRIC = Pattern.compile("\\bferry_[a-z0-9_]+");

    static Path repo() {
        return Path.of(System.getProperty("user.dir")).getParent();
    }

    static Set<String> queried(List<String> expressions) {
        Set<String> out = new TreeSet<>();
        for (String e : expressions) {
            Matcher m = METRIC.matcher(e);
            while (m.find()) {
                out.add(m.group());
            }
        }
        return out;
    }

    @Test
    void everyMetricTheDashboardAndTheAlertsQuery_isExported(@TempDir Path dir) throws Exception {
        List<String> expressions = new ArrayList<>();
        JsonNode dashboard = new ObjectMapper().readTree(repo().resolve("ops/grafana/ferry-four-numbers.json").toFile());
        for (JsonNode panel : dashboard.get("panels")) {
            assertThat(panel.get("targets")).as("panel %s", panel.get("title")).isNotEmpty();
            panel.get("targets").forEach(t -> expressions.add(t.get("expr").asText()));
        }
        JsonNode rules = new ObjectMapper(new YAMLFactory()).readTree(repo().resolve("ops/prometheus/ferry-alerts.yml").toFile());
        for (JsonNode group : rules.get("groups")) {
            for (JsonNode rule : group.get("rules")) {
                assertThat(rule.get("alert").asText()).isNotBlank();
                expressions.add(rule.get("expr").asText());
            }
        }
        Set<String> queried = queried(expressions);
        assertThat(queried).contains("ferry_loader_wait_seconds", "ferry_cache_bytes_total", "ferry_egress_bytes_total",
                "ferry_job_predicted_egress_bytes", "ferry_job_findings");

        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).start(); HttpClient http = HttpClient.newHttpClient()) {
            Files.write(ferry.root.resolve("data/a.bin"), new byte[4096]);
            String etag = ferry.daemon.node().stack().cache().head(ObjectKey.of("data", "a.bin")).etag();
            Path file = dir.resolve("m.json");
            ManifestJson.write(new Manifest(List.of(new Shard(ObjectKey.of("data", "a.bin"), 4096, etag, 4))), "test", file);
            URI api = ferry.endpoint().resolve("/_ferry/v1/");
            String reg = "{\"job\":\"dash\",\"manifest\":" + Files.readString(file) + ",\"batch_size\":2}";
            assertThat(http.send(HttpRequest.newBuilder(api.resolve("jobs")).POST(HttpRequest.BodyPublishers.ofString(reg)).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
            String progress = "{\"rank\":0,\"epoch\":1,\"position\":2,\"samples\":2,\"waits_ms\":[1.5]}";
            assertThat(http.send(HttpRequest.newBuilder(api.resolve("jobs/dash/progress")).POST(HttpRequest.BodyPublishers.ofString(progress))
                    .build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
            String metrics = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            Set<String> exported = new TreeSet<>();
            metrics.lines().filter(l -> !l.startsWith("#") && !l.isBlank()).forEach(l -> exported.add(l.split("[{ ]", 2)[0]));
            assertThat(exported).as("exported metrics").containsAll(queried);
        }
    }
}
