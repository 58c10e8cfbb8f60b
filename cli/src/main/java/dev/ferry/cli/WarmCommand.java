package dev.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.cli.errors.UserError;
import dev.ferry.time.Clock;
import dev.ferry.util.Sizes;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ferry warm}: loads a prefix, or a manifest's objects, into a daemon's local tier before a job starts (JuiceFS's
 * {@code warmup}, Alluxio's {@code load}), through the daemon's {@code POST /_ferry/v1/warm}; shows its progress until
 * it is done. Warming again fetches only what is not resident: it is idempotent, and resumes one cut short.
 */
@Command(name = "warm", mixinStandardHelpOptions = true,
        description = {"Load a prefix (s3://BUCKET/PREFIX) or a manifest's objects (--manifest BUCKET/KEY) into a daemon's local tier.",
                "Shows objects, bytes, rate and time left; what is already resident is not fetched again. Exit 1 if it fails."})
final class WarmCommand implements Callable<Integer> {
    @Parameters(index = "0", arity = "0..1", paramLabel = "s3://BUCKET/PREFIX", description = "The objects to load.")
    String location;

    @Option(names = "--manifest", paramLabel = "BUCKET/KEY", description = "Load the objects of this manifest (as ferry index wrote it) instead.")
    String manifest;

    @Option(names = "--url", paramLabel = "URL", description = "The daemon (default: FERRY_ENDPOINT, else http://127.0.0.1:9099).")
    String url;

    @Override
    public Integer call() throws Exception {
        if ((location == null) == (manifest == null)) {
            throw new UserError("ferry warm needs either s3://BUCKET/PREFIX or --manifest BUCKET/KEY");
        }
        String body;
        if (manifest != null) {
            body = "{\"manifest_key\":" + DaemonApi.json(manifest) + "}";
        } else {
            String[] bp = DaemonApi.location(location);
            body = "{\"bucket\":" + DaemonApi.json(bp[0]) + ",\"prefix\":" + DaemonApi.json(bp[1]) + "}";
        }
        try (DaemonApi daemon = new DaemonApi(url)) {
            JsonNode p = daemon.call("POST", "/_ferry/v1/warm", "", body, "start warming");
            String id = p.path("id").asText();
            boolean terminal = System.console() != null;
            Clock clock = Clock.system();
            long lastLine = 0;
            while (!p.path("state").asText().equals("done") && !p.path("state").asText().equals("failed")) {
                Thread.sleep(500);
                p = daemon.call("GET", "/_ferry/v1/warm/" + id, "", null, "follow the warm");
                long now = clock.nanoTime();
                if (terminal) {
                    System.out.print("\r" + line(p) + "   ");
                    System.out.flush();
                } else if (now - lastLine > 5_000_000_000L) {
                    System.out.println(line(p));
                    lastLine = now;
                }
            }
            if (terminal) {
                System.out.println();
            }
            if (p.path("state").asText().equals("failed")) {
                throw new UserError("warming " + p.path("source").asText() + " failed: " + p.path("error").asText(), 1);
            }
            double seconds = Math.max(1e-3, p.path("seconds").asDouble());
            System.out.printf(Locale.ROOT, "ferry warm: %s: %d objects, %s resident in %.1f s (%s/s); fetched %s from the object store "
                    + "(egress %s, $%.4f)%n", p.path("source").asText(), p.path("objects_done").asLong(), Sizes.format(p.path("bytes_done").asLong()),
                    seconds, Sizes.format((long) (p.path("bytes_fetched").asLong() / seconds)), Sizes.format(p.path("bytes_fetched").asLong()),
                    Sizes.format(p.path("egress_bytes").asLong()), p.path("egress_cost_usd").asDouble());
            if (p.path("objects_not_fitting").asLong() > 0) {
                System.out.printf(Locale.ROOT, "  %d objects (%s) did not fit: the tier keeps a tenth of its capacity free (see ferry cache ls)%n",
                        p.path("objects_not_fitting").asLong(), Sizes.format(p.path("bytes_not_fitting").asLong()));
            }
            return 0;
        }
    }

    /** One progress line: objects and bytes done of the total, rate, time left. */
    static String line(JsonNode p) {
        long total = p.path("bytes_total").asLong() - p.path("bytes_not_fitting").asLong();
        long done = p.path("bytes_done").asLong();
        double seconds = Math.max(1e-3, p.path("seconds").asDouble());
        double rate = done / seconds;
        String left = rate <= 0 || done >= total ? "" : String.format(Locale.ROOT, ", %.0f s left", (total - done) / rate);
        return String.format(Locale.ROOT, "%s: %d/%d objects, %s of %s, %s/s%s", p.path("state").asText(), p.path("objects_done").asLong(),
                p.path("objects_total").asLong() - p.path("objects_not_fitting").asLong(), Sizes.format(done), Sizes.format(total),
                Sizes.format((long) rate), left);
    }
}
