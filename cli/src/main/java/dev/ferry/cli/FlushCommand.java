package dev.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.cli.errors.Errors;
import dev.ferry.cli.errors.UserError;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ferry flush}: the write-back fence from a shell ({@code POST /_ferry/v1/flush}), for a Kubernetes preStop
 * hook or a Slurm epilog: it returns once every write the daemon acknowledged before it is in the object store.
 * Signs the request (a presigned URL) with {@code FERRY_ACCESS_KEY}/{@code FERRY_SECRET_KEY} when they are set, as the
 * daemon reads them.
 */
@Command(name = "flush", mixinStandardHelpOptions = true,
        description = {"Wait until every write a daemon acknowledged (write-back) is in the object store.",
                "Exit 0 when it is (or the daemon has no write-back), 1 when writes are still local at the timeout or the store refused one."})
final class FlushCommand implements Callable<Integer> {
    @Option(names = "--url", paramLabel = "URL", description = "The daemon (default: FERRY_ENDPOINT, else http://127.0.0.1:9099).")
    String url;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10m",
            description = "How long to wait for the uploads, e.g. 90s or 10m (default ${DEFAULT-VALUE}).")
    String timeout;

    @Override
    public Integer call() throws Exception {
        URI base = StatusCommand.daemonUrl(url);
        Duration wait = parseDuration(timeout);
        String path = "/_ferry/v1/flush";
        String query = "timeout_ms=" + wait.toMillis();
        URI uri = DaemonApi.signed(base, "POST", path, query, wait.plusMinutes(5));
        HttpResponse<String> r;
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build()) {
            r = http.send(HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.noBody()).timeout(wait.plusSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException | HttpConnectTimeoutException e) {
            throw new UserError("no ferry daemon answers at " + base + ": nothing to flush there", 1);
        } catch (HttpTimeoutException e) {
            throw new UserError("the ferry daemon at " + base + " did not answer the flush within " + timeout + " and 30 s", 1);
        } catch (IOException e) {
            throw new UserError("cannot flush the ferry daemon at " + base + ": " + Errors.oneSentence(e), 1);
        }
        JsonNode answer;
        try {
            answer = new ObjectMapper().readTree(r.body());
        } catch (IOException e) {
            throw new UserError("the daemon at " + base + " answered " + r.statusCode() + " with a body that is not JSON", 1);
        }
        if (answer == null || !answer.has("complete")) {
            String message = answer != null ? answer.path("error").path("message").asText(r.body()) : r.body();
            throw new UserError("the daemon at " + base + " refused the flush (" + r.statusCode() + "): " + message, 1);
        }
        long writes = answer.path("writes").size();
        if (!answer.path("write_back").asBoolean()) {
            System.out.println("ferry flush: " + base + " has no write-back: every write was stored before it was acknowledged");
            return 0;
        }
        if (answer.path("complete").asBoolean()) {
            System.out.println("ferry flush: every write acknowledged before the fence is in the object store (" + writes
                    + " were still uploading)");
            return 0;
        }
        if (!answer.path("first_error").isNull() && !answer.path("first_error").asText().isEmpty()) {
            throw new UserError("the object store refused a write: " + answer.path("first_error").asText(), 1);
        }
        long local = 0;
        for (JsonNode w : answer.path("writes")) {
            local += w.path("durability").asText().equals("local") ? 1 : 0;
        }
        throw new UserError(local + " of " + writes + " writes were still only on this node's disk after " + timeout
                + " (they upload on; the journal keeps them across a restart)", 1);
    }

    /** {@code 90s}, {@code 500ms}, {@code 10m}, {@code 1h}; a bare number is seconds. */
    static Duration parseDuration(String text) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)\\s*(ms|s|m|h)?").matcher(text.trim());
        if (!m.matches()) {
            throw new UserError("--timeout must be a duration such as 90s, 10m or 1h, not '" + text + "'");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2) == null ? "s" : m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofSeconds(n);
        };
    }
}
