package dev.ferry.serve.jobs;

import static io.netty.handler.codec.http.HttpMethod.DELETE;
import static io.netty.handler.codec.http.HttpMethod.GET;
import static io.netty.handler.codec.http.HttpMethod.HEAD;
import static io.netty.handler.codec.http.HttpMethod.POST;
import static io.netty.handler.codec.http.HttpMethod.PUT;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import io.netty.handler.codec.http.HttpMethod;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The routing of ferry's own API under {@code /_ferry/} to its four resources, called as the front calls it: each
 * resource reached by its method and path, a path or method it does not serve refused with a sentence naming both,
 * which views are public, the error's JSON, and what the status, metrics and flush resources answer. A real node over
 * a folder store, on a manual clock.
 */
class ControlApiTest {
    private static final String TRAIN = "{\"job\":\"train\",\"manifest_key\":\"data/manifest.json\",\"seed\":7,"
            + "\"world\":{\"nodes\":1,\"ranks_per_node\":4,\"workers_per_rank\":1},\"batch_size\":4}";

    @Test
    void theStatusPage_isServedAtFerryWithOrWithoutItsSlash(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            for (String path : List.of("/_ferry", "/_ferry/")) {
                Reply.Full page = calls.call(GET, path, null);
                assertThat(page.status().code()).isEqualTo(200);
                assertThat(page.headers().get("Content-Type")).isEqualTo("text/html; charset=utf-8");
                assertThat(ApiCalls.text(page)).as(path).contains("<html").contains("v1/status");
            }
        }
    }

    @Test
    void theStatus_reportsTheDaemonTheFrontAndEachJob(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            RunningJob run = n.jobs.register(n.job("train", 7));
            n.jobs.sample();
            n.clock.advanceMillis(1000);
            run.progress(1, 16, 16, new double[] {1.0, 1.0, 1.0, 1.0});
            n.jobs.sample();

            JsonNode status = calls.ok(GET, "/_ferry/v1/status", null);

            assertThat(status.at("/daemon/endpoint").asText()).isEqualTo(ApiCalls.ENDPOINT.toString());
            assertThat(status.at("/daemon/block_size").asInt()).isEqualTo(JobsNode.BLOCK);
            assertThat(status.at("/tiers/local/capacity_bytes").asLong()).isEqualTo(64L << 20);
            assertThat(status.at("/serve/requests").asLong()).isEqualTo(ApiCalls.SERVED.requests());
            assertThat(status.at("/serve/latency_ms_p99").asDouble()).isEqualTo(ApiCalls.SERVED.latencyP99Millis());
            assertThat(status.get("jobs")).hasSize(1);
            JsonNode job = status.get("jobs").get(0);
            assertThat(job.get("job").asText()).isEqualTo("train");
            assertThat(job.get("epoch").asInt()).isEqualTo(1);
            assertThat(job.get("position").asLong()).isEqualTo(16);
            assertThat(job.get("samples_per_epoch").asLong()).isEqualTo(128);
            assertThat(job.at("/epochs/0/samples").asLong()).isEqualTo(16);
            assertThat(job.at("/epochs/0/steps").asLong()).isEqualTo(4);
            assertThat(job.at("/epochs/0/samples_per_s").asDouble()).as("16 samples a second after the epoch began").isEqualTo(16.0);
            assertThat(status.at("/four_numbers/job").asText()).as("the job that reported last").isEqualTo("train");
            assertThat(status.at("/jobs_total/jobs").asInt()).isEqualTo(1);
            assertThat(status.at("/jobs_total/steps").asLong()).isEqualTo(4);
            assertThat(status.get("history")).as("two samples a second apart: one point").hasSize(1);
            assertThat(status.at("/history/0/samples_per_s").asDouble()).isEqualTo(16.0);
            assertThat(status.at("/history/0/hit_rate").isNull()).as("no block read yet").isTrue();
        }
    }

    @Test
    void theMetrics_areWellFormedPrometheusTextWithEachJobsGauges(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            n.jobs.register(n.job("train", 7)).progress(1, 8, 8, new double[] {1.0, 2.0});

            Reply.Full reply = calls.call(GET, "/_ferry/metrics", null);

            assertThat(reply.status().code()).isEqualTo(200);
            assertThat(reply.headers().get("Content-Type")).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
            String text = new String(reply.body(), StandardCharsets.UTF_8);
            assertWellFormed(text);
            assertThat(text).contains("ferry_job_predicted_egress_bytes{job=\"train\"} " + (double) n.manifest().totalBytes())
                    .contains("ferry_job_egress_bytes{job=\"train\"} 0.0")
                    .contains("ferry_job_findings{job=\"train\"} 0.0")
                    .contains("ferry_loader_samples_total 8.0");
        }
    }

    @Test
    void aFlushWithoutWriteBack_isCompleteAtOnce(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            JsonNode flush = new ApiCalls(n).ok(POST, "/_ferry/v1/flush", null);

            assertThat(flush.toString()).isEqualTo("{\"complete\":true,\"write_back\":false,\"writes\":[]}");
        }
    }

    @Test
    void aRegistration_isRoutedToTheJobs(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            n.manifestInStore();

            JsonNode answer = new ApiCalls(n).ok(POST, "/_ferry/v1/jobs", TRAIN);

            assertThat(answer.get("registration").asText()).isEqualTo("new");
            assertThat(n.jobs.jobs()).containsOnlyKeys("train");
        }
    }

    @Test
    void eachResourceOfAJob_isRoutedToIt(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            n.jobs.register(n.job("train", 7));

            assertThat(calls.ok(GET, "/_ferry/v1/jobs/train/order?epoch=1&rank=0", null).get("sample_count").asInt()).isEqualTo(32);
            assertThat(calls.ok(GET, "/_ferry/v1/jobs/train/checkpoint?epoch=1&position=8", null).get("position").asLong()).isEqualTo(8);
            assertThat(calls.ok(POST, "/_ferry/v1/jobs/train/progress", "{\"epoch\":1,\"position\":8}").get("ok").asBoolean()).isTrue();
        }
    }

    @Test
    void aPathWithNoApi_is404NamingTheMethodAndPath(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            S3Error e = new ApiCalls(n).refused(GET, "/_ferry/v2/status", null);

            assertThat(e.status()).isEqualTo(404);
            assertThat(e.code()).isEqualTo("NoSuchEndpoint");
            assertThat(e.getMessage()).isEqualTo("ferry has no API at GET /_ferry/v2/status; see ferry's own API in docs/daemon.md");
        }
    }

    @Test
    void aResourceAskedWithAnotherMethod_is405NamingTheOneItAnswers(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            SoftAssertions soft = new SoftAssertions();
            for (Ask a : List.of(new Ask(POST, "/_ferry/v1/status"), new Ask(GET, "/_ferry/v1/jobs"), new Ask(GET, "/_ferry/v1/flush"),
                    new Ask(DELETE, "/_ferry/metrics"), new Ask(POST, "/_ferry/"), new Ask(HEAD, "/_ferry/v1/status"))) {
                S3Error e = calls.refused(a.method(), a.path(), null);
                soft.assertThat(e.status()).as("%s", a).isEqualTo(405);
                soft.assertThat(e.code()).as("%s", a).isEqualTo("MethodNotAllowed");
                soft.assertThat(e.getMessage()).as("%s", a).isEqualTo(a.method() + " is not allowed on " + a.path() + ": it answers "
                        + (a.path().endsWith("jobs") || a.path().endsWith("flush") ? "POST" : "GET"));
            }
            soft.assertAll();
        }
    }

    @Test
    void aJobPathWithNoResource_is404(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            SoftAssertions soft = new SoftAssertions();
            for (Ask a : List.of(new Ask(GET, "/_ferry/v1/jobs/train"), new Ask(GET, "/_ferry/v1/jobs/no space/order"))) {
                S3Error e = calls.refused(a.method(), a.path(), null);
                soft.assertThat(e.status()).as("%s", a).isEqualTo(404);
                soft.assertThat(e.getMessage()).as("%s", a).startsWith("ferry has no API at " + a.method() + " " + a.path() + ";");
            }
            soft.assertAll();
        }
    }

    @Test
    void aJobsResourceAskedWithAnotherMethod_is405(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ApiCalls calls = new ApiCalls(n);
            n.jobs.register(n.job("train", 7));
            SoftAssertions soft = new SoftAssertions();
            for (Ask a : List.of(new Ask(PUT, "/_ferry/v1/jobs/train/order"), new Ask(POST, "/_ferry/v1/jobs/train/checkpoint"),
                    new Ask(GET, "/_ferry/v1/jobs/train/progress"), new Ask(DELETE, "/_ferry/v1/jobs/train/order"))) {
                S3Error e = calls.refused(a.method(), a.path(), null);
                soft.assertThat(e.status()).as("%s", a).isEqualTo(405);
                soft.assertThat(e.code()).as("%s", a).isEqualTo("MethodNotAllowed");
                soft.assertThat(e.getMessage()).isEqualTo(a.method() + " is not allowed on " + a.path());
            }
            soft.assertAll();
        }
    }

    @Test
    void aJobNobodyRegistered_is404NamingIt(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            S3Error e = new ApiCalls(n).refused(GET, "/_ferry/v1/jobs/nobody/order?epoch=1", null);

            assertThat(e.status()).isEqualTo(404);
            assertThat(e.code()).isEqualTo("NoSuchJob");
            assertThat(e.getMessage()).isEqualTo("no job named 'nobody' is registered");
        }
    }

    @Test
    void onlyTheReadOnlyViews_arePublic(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ControlApi api = new ApiCalls(n).api;

            assertThat(List.of("/_ferry", "/_ferry/", "/_ferry/metrics", "/_ferry/v1/status")).allMatch(p -> api.isPublic(GET, p));
            assertThat(api.isPublic(POST, "/_ferry/v1/status")).isFalse();
            assertThat(api.isPublic(POST, "/_ferry/v1/jobs")).isFalse();
            assertThat(api.isPublic(POST, "/_ferry/v1/flush")).isFalse();
            assertThat(api.isPublic(GET, "/_ferry/v1/jobs/train/order")).as("the plan API needs a signature").isFalse();
        }
    }

    @Test
    void onlyARegistration_watchesItsClient(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            ControlApi api = new ApiCalls(n).api;

            assertThat(api.watchesClient(POST, "/_ferry/v1/jobs")).isTrue();
            assertThat(api.watchesClient(GET, "/_ferry/v1/jobs")).isFalse();
            assertThat(api.watchesClient(POST, "/_ferry/v1/jobs/train/progress")).isFalse();
            assertThat(api.watchesClient(POST, "/_ferry/v1/flush")).isFalse();
        }
    }

    @Test
    void anError_isAnsweredAsJsonWithItsStatusCodeAndMessage() throws Exception {
        Reply.Full reply = ControlApi.error(new S3Error(409, "JobConflict", "job 'train' is \"taken\""));

        assertThat(reply.status().code()).isEqualTo(409);
        assertThat(reply.headers().get("Content-Type")).isEqualTo("application/json");
        assertThat(ApiCalls.text(reply)).isEqualTo("{\"error\":{\"code\":\"JobConflict\",\"message\":\"job 'train' is \\\"taken\\\"\"}}");
    }

    private record Ask(HttpMethod method, String path) {
    }

    /**
     * Prometheus' text format, line by line: {@code # HELP} and {@code # TYPE} comments, and samples
     * {@code name{label="value",...} number}, each of a family a {@code # TYPE} line declared before it.
     */
    private static void assertWellFormed(String text) {
        Pattern type = Pattern.compile("# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|summary|histogram|untyped|unknown)");
        Pattern help = Pattern.compile("# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*");
        Pattern sample = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\.)*\""
                + "(?:,[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\.)*\")*,?})? (-?[0-9.]+(?:[eE][-+]?[0-9]+)?|NaN|[+-]Inf)");
        List<String> families = new ArrayList<>();
        int samples = 0;
        assertThat(text).endsWith("\n");
        for (String line : text.split("\n")) {
            var t = type.matcher(line);
            if (t.matches()) {
                families.add(t.group(1));
                continue;
            }
            if (help.matcher(line).matches()) {
                continue;
            }
            var s = sample.matcher(line);
            assertThat(s.matches()).as("a sample line: '%s'", line).isTrue();
            String name = s.group(1);
            assertThat(families).as("the family of '%s' declared before it", line).anyMatch(f -> name.equals(f) || name.startsWith(f + "_"));
            samples++;
        }
        assertThat(samples).isPositive();
    }
}
