package dev.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.cli.errors.Errors;
import dev.ferry.cli.errors.UserError;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.SigV4;
import dev.ferry.store.ObjectKey;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Calls to a daemon's own API (under {@code /_ferry/}) from the CLI: presigned with {@code FERRY_ACCESS_KEY} and
 * {@code FERRY_SECRET_KEY} when they are set (as the daemon reads them), JSON back, and the daemon's error, or its
 * absence, said in one sentence. Not thread-safe.
 */
final class DaemonApi implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    final URI base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

    /** The daemon at {@code url} (null: FERRY_ENDPOINT, else the default). */
    DaemonApi(String url) {
        this.base = StatusCommand.daemonUrl(url);
    }

    /** {@code path?query} on {@code base}, presigned for {@code method} for {@code validity} when keys are set. */
    static URI signed(URI base, String method, String path, String query, Duration validity) {
        String accessKey = System.getenv("FERRY_ACCESS_KEY");
        String secretKey = System.getenv("FERRY_SECRET_KEY");
        String q = query;
        if (accessKey != null && !accessKey.isBlank() && secretKey != null && !secretKey.isBlank()) {
            String host = base.getPort() < 0 ? base.getHost() : base.getHost() + ":" + base.getPort();
            try {
                q = new SigV4(accessKey.trim(), secretKey.trim()).presignedQuery(method, path, query, host, "us-east-1", Clock.system().now(),
                        validity);
            } catch (S3Error e) {
                throw new IllegalStateException("cannot sign " + path + ": " + e.getMessage(), e);
            }
        }
        return base.resolve(path + (q.isEmpty() ? "" : "?" + q));
    }

    /** {@code method path?query} with {@code body} (JSON, or null); the answer's JSON, or a UserError naming what went wrong. */
    JsonNode call(String method, String path, String query, String body, String doing) {
        URI uri = signed(base, method, path, query, Duration.ofMinutes(5));
        HttpRequest.BodyPublisher publisher = body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body);
        HttpResponse<String> r;
        try {
            r = http.send(HttpRequest.newBuilder(uri).method(method, publisher).header("Content-Type", "application/json")
                    .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException | HttpConnectTimeoutException e) {
            throw new UserError("no ferry daemon answers at " + base + " (start one with 'ferry serve', or pass --url)", 1);
        } catch (IOException e) {
            throw new UserError("cannot " + doing + " at " + base + ": " + Errors.oneSentence(e), 1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UserError("interrupted", 1);
        }
        JsonNode answer;
        try {
            answer = JSON.readTree(r.body());
        } catch (IOException e) {
            throw new UserError("the daemon at " + base + " answered " + r.statusCode() + " with a body that is not JSON", 1);
        }
        if (r.statusCode() >= 300) {
            String message = answer == null ? r.body() : answer.path("error").path("message").asText(r.body());
            throw new UserError("cannot " + doing + ": " + message + " (" + r.statusCode() + ")", 1);
        }
        return answer;
    }

    /** {@code s3://BUCKET[/PREFIX]} as bucket and prefix ("" when none); one sentence when it is not. */
    static String[] location(String location) {
        if (!location.startsWith("s3://")) {
            throw new UserError("the location must look like s3://BUCKET/PREFIX, not '" + location + "'");
        }
        String rest = location.substring("s3://".length());
        int slash = rest.indexOf('/');
        String bucket = slash < 0 ? rest : rest.substring(0, slash);
        try {
            ObjectKey.validateBucket(bucket);
        } catch (IllegalArgumentException e) {
            throw new UserError(location + ": " + e.getMessage());
        }
        return new String[] {bucket, slash < 0 ? "" : rest.substring(slash + 1)};
    }

    @Override
    public void close() {
        http.close();
    }
}
