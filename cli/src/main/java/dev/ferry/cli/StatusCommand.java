package dev.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.cli.errors.Errors;
import dev.ferry.cli.errors.UserError;
import dev.ferry.util.Sizes;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ferry status}: what the status page shows, in the terminal. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show a running daemon's four numbers, tiers, jobs and write-back, as its status page does.")
final class StatusCommand implements Callable<Integer> {
    /** The node's daemon, where a client given no URL looks (as the Python client's {@code FerryClient()}). */
    static final String DEFAULT_URL = "http://127.0.0.1:9099";

    @Option(names = "--url", paramLabel = "URL", description = "The daemon (default: FERRY_ENDPOINT, else " + DEFAULT_URL + ").")
    String url;

    @Option(names = "--json", description = "Print the daemon's status JSON as it is.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        URI base = daemonUrl(url);
        String where = base.toString();
        base = URI.create(where + "/");
        String body;
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build()) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("_ferry/v1/status")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new UserError("the daemon at " + where + " answered " + r.statusCode() + ": " + r.body());
            }
            body = r.body();
        } catch (ConnectException | HttpConnectTimeoutException e) {
            throw new UserError("no ferry daemon answers at " + where + ": start one with ferry serve", 1);
        } catch (HttpTimeoutException e) {
            throw new UserError("the ferry daemon at " + where + " accepted the connection but sent no status within 10 s", 1);
        } catch (IOException e) {
            throw new UserError("cannot read the status of the ferry daemon at " + where + ": " + Errors.oneSentence(e), 1);
        }
        if (json) {
            System.out.println(body);
            return 0;
        }
        print(new ObjectMapper().readTree(body), System.out);
        return 0;
    }

    /**
     * The daemon's base URL ({@code http://host:port}, no trailing slash): {@code given}, else {@code FERRY_ENDPOINT},
     * else {@link #DEFAULT_URL}.
     */
    static URI daemonUrl(String given) {
        String from = given != null ? "--url" : "FERRY_ENDPOINT";
        String text = given;
        if (text == null) {
            String env = System.getenv("FERRY_ENDPOINT");
            text = env == null || env.isBlank() ? DEFAULT_URL : env.trim();
        }
        URI u;
        try {
            u = URI.create(text.endsWith("/") ? text.substring(0, text.length() - 1) : text);
        } catch (IllegalArgumentException e) {
            throw new UserError(from + " must look like http://host:port, not '" + text + "'");
        }
        if (u.getScheme() == null || !(u.getScheme().equals("http") || u.getScheme().equals("https")) || u.getHost() == null
                || (u.getRawPath() != null && !u.getRawPath().isEmpty())) {
            throw new UserError(from + " must look like http://host:port, not '" + text + "'");
        }
        return u;
    }

    static void print(JsonNode s, PrintStream out) {
        JsonNode d = s.path("daemon");
        out.printf(Locale.ROOT, "ferry at %s, up %.0f s, in front of %s%n", d.path("endpoint").asText(), d.path("uptime_s").asDouble(),
                d.path("upstream").asText());
        JsonNode f = s.path("four_numbers");
        out.println();
        if (f.has("job")) {
            out.printf(Locale.ROOT, "  job %s, epoch %d%n", f.path("job").asText(), f.path("epoch").asInt());
            out.printf(Locale.ROOT, "  samples/s           %12.0f%n", f.path("samples_per_s").asDouble());
            out.printf(Locale.ROOT, "  wait per step       %12.2f ms p50, %.2f ms p99%n", f.path("wait_per_step_ms_p50").asDouble(),
                    f.path("wait_per_step_ms_p99").asDouble());
        } else {
            out.println("  no job has reported progress yet (samples/s and wait per step come from a job's consumers)");
        }
        if (f.has("waited_share_bytes")) {
            out.printf(Locale.ROOT, "  local hit rate      %11.1f %% of bytes resident before the epoch asked (%.1f %% prefetched in time, "
                    + "%.1f %% waited for)%n", 100 * f.path("local_hit_rate_bytes").asDouble(), 100 * f.path("prefetched_share_bytes").asDouble(),
                    100 * f.path("waited_share_bytes").asDouble());
        } else {
            out.printf(Locale.ROOT, "  local hit rate      %11.1f %% of block reads, %.1f %% of bytes (the tier, no job yet)%n",
                    100 * f.path("local_hit_rate").asDouble(), 100 * f.path("local_hit_rate_bytes").asDouble());
        }
        if (s.path("tiers").has("peer")) {
            out.printf(Locale.ROOT, "  from peers          %12s  (regional group)%n", Sizes.format(f.path("peer_bytes").asLong()));
        }
        if (s.path("tiers").has("shared")) {
            out.printf(Locale.ROOT, "  from shared tier    %12s%n", Sizes.format(f.path("shared_tier_bytes").asLong()));
        }
        out.printf(Locale.ROOT, "  egress (origin)     %12s  ($%.4f)%n", Sizes.format(f.path("egress_bytes").asLong()),
                f.path("egress_cost_usd").asDouble());
        JsonNode l = s.path("tiers").path("local");
        JsonNode o = s.path("tiers").path("origin");
        JsonNode v = s.path("serve");
        out.println();
        out.printf(Locale.ROOT, "  local tier    %s of %s resident, %s prefetched, %d evicted%n", Sizes.format(l.path("resident_bytes").asLong()),
                Sizes.format(l.path("capacity_bytes").asLong()), Sizes.format(l.path("prefetched_bytes").asLong()),
                l.path("evicted_capacity").asLong());
        out.printf(Locale.ROOT, "  object store  %d requests, %d throttled, first byte p50 %.1f ms%n", o.path("requests").asLong(),
                o.path("throttled").asLong(), o.path("first_byte_ms_p50").asDouble());
        out.printf(Locale.ROOT, "  served        %d requests (%d errors), %s by sendfile, %s streamed, p99 %.1f ms%n",
                v.path("requests").asLong(), v.path("client_errors").asLong() + v.path("server_errors").asLong(),
                Sizes.format(v.path("zero_copy_bytes").asLong()), Sizes.format(v.path("streamed_bytes").asLong()),
                v.path("latency_ms_p99").asDouble());
        JsonNode p = s.path("tiers").path("peer");
        if (!p.isMissingNode()) {
            out.printf(Locale.ROOT, "  peers         %s from %d requests, %d failovers, %d resumed streams%n", Sizes.format(p.path("bytes").asLong()),
                    p.path("requests").asLong(), p.path("failovers").asLong(), p.path("resumes").asLong());
        }
        JsonNode g = s.path("group");
        if (!g.isMissingNode()) {
            long up = 0;
            for (JsonNode m : g.path("members")) {
                up += m.path("state").asText().equals("up") ? 1 : 0;
            }
            out.printf(Locale.ROOT, "  group         %s: %d of %d members up, %d changes%n", g.path("source").asText(), up,
                    g.path("members").size(), g.path("changes").asLong());
            for (JsonNode m : g.path("members")) {
                out.printf(Locale.ROOT, "                  %-5s %s since %s%s%n", m.path("state").asText(), m.path("url").asText(),
                        m.path("since").asText(), m.path("self").asBoolean() ? "  (this node)" : "");
            }
        }
        JsonNode sh = s.path("tiers").path("shared");
        if (!sh.isMissingNode()) {
            out.printf(Locale.ROOT, "  shared tier   %s read in %d hits, %s filled, %d damaged copies replaced%n", Sizes.format(sh.path("bytes").asLong()),
                    sh.path("hits").asLong(), Sizes.format(sh.path("bytes_filled").asLong()), sh.path("damaged").asLong());
        }
        JsonNode w = s.path("write_back");
        if (!w.isMissingNode()) {
            out.printf(Locale.ROOT, "  write-back    %s pending in %d objects, oldest %.1f s, uploading %s/s, %d failed%n",
                    Sizes.format(w.path("pending_bytes").asLong()), w.path("pending_objects").asLong(), w.path("oldest_pending_s").asDouble(),
                    Sizes.format(w.path("upload_bytes_per_s").asLong()), w.path("failed").asLong());
            if (w.hasNonNull("first_failure")) {
                out.printf(Locale.ROOT, "                first failed: %s%n", w.path("first_failure").asText());
            }
            if (w.path("retrying").asLong() > 0) {
                out.printf(Locale.ROOT, "                %d being retried, first: %s%n", w.path("retrying").asLong(), w.path("first_retrying").asText());
            }
            if (w.path("settling").asLong() > 0 || w.path("late_attempts_repaired").asLong() > 0) {
                out.printf(Locale.ROOT, "                %d settling (an abandoned upload attempt may still land), %d late attempts repaired%n",
                        w.path("settling").asLong(), w.path("late_attempts_repaired").asLong());
            }
        }
        JsonNode dec = s.path("decoded");
        if (dec.has("entries") && (dec.path("quota_bytes").asLong() > 0 || dec.path("entries").asLong() > 0)) {
            out.printf(Locale.ROOT, "  decoded       %s held in %d samples of %s lent, %d read back, %d refused, %d corrupt, %d stale%n",
                    Sizes.format(dec.path("held_bytes").asLong()), dec.path("entries").asLong(), Sizes.format(dec.path("quota_bytes").asLong()),
                    dec.path("hits").asLong(), dec.path("refused").asLong(), dec.path("corrupt").asLong(), dec.path("stale").asLong());
            out.printf(Locale.ROOT, "                %s%n", dec.path("why").asText());
        }
        if (s.path("jobs").size() > 0) {
            out.println();
            out.println("  job / epoch            samples  samples/s  wait p50 ms  wait p99 ms  resident  prefetched  waited      egress   predicted");
            for (JsonNode j : s.path("jobs")) {
                for (JsonNode e : j.path("epochs")) {
                    long predicted = e.path("predicted_egress_bytes").asLong(-1);
                    out.printf(Locale.ROOT, "  %-20s %9d %10.0f %12.2f %12.2f %8.1f %% %9.1f %% %6.1f %% %11s %11s%n",
                            j.path("job").asText() + " / " + e.path("epoch").asInt(), e.path("samples").asLong(), e.path("samples_per_s").asDouble(),
                            e.path("wait_per_step_ms_p50").asDouble(), e.path("wait_per_step_ms_p99").asDouble(),
                            100 * e.path("local_hit_rate_bytes").asDouble(), 100 * e.path("prefetched_share_bytes").asDouble(),
                            100 * e.path("waited_share_bytes").asDouble(), Sizes.format(e.path("egress_bytes").asLong()),
                            predicted < 0 ? "-" : Sizes.format(predicted));
                }
            }
            JsonNode t = s.path("jobs_total");
            out.printf(Locale.ROOT, "  %-20s %86s%n", "daemon", Sizes.format(t.path("egress_bytes").asLong()) + " (jobs "
                    + Sizes.format(t.path("jobs_egress_bytes").asLong()) + ", other " + Sizes.format(t.path("other_egress_bytes").asLong()) + ")");
            out.println("  (resident: bytes on the local tier before the epoch asked for them, the hit rate; prefetched: fetched during the");
            out.println("   epoch before the read; waited: the read waited for the object store. predicted: the job's plan replayed");
            out.println("   through the eviction policy. other: egress no job's plan asked for: listings, metadata, unplanned reads)");
            for (JsonNode j : s.path("jobs")) {
                for (JsonNode a : j.path("advice")) {
                    out.println("  advice (" + j.path("job").asText() + "): " + a.asText());
                }
            }
        }
    }
}
