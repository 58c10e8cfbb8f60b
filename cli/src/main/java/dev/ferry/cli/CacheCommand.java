package dev.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.cli.errors.UserError;
import dev.ferry.util.Sizes;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code ferry cache ls} and {@code ferry cache drop}: what a daemon's local tier holds, and dropping a prefix from it. */
@Command(name = "cache", mixinStandardHelpOptions = true, subcommands = {CacheCommand.Ls.class, CacheCommand.Drop.class},
        description = {"See or drop what a daemon's local tier holds (ls, drop)."})
final class CacheCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError("ferry cache needs a subcommand: ls [s3://BUCKET/PREFIX] or drop s3://BUCKET/PREFIX");
    }

    static String query(String bucket, String prefix) {
        return "bucket=" + encode(bucket) + "&prefix=" + encode(prefix);
    }

    /** Percent-encoded for a query (a space as %20: the daemon reads '+' as itself, as S3 does in keys). */
    static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    @Command(name = "ls", mixinStandardHelpOptions = true,
            description = {"List what the local tier holds: buckets, or the folders and objects under s3://BUCKET/PREFIX, with sizes and idle time."})
    static final class Ls implements Callable<Integer> {
        @Parameters(index = "0", arity = "0..1", paramLabel = "s3://BUCKET/PREFIX", description = "Where to list (default: every bucket).")
        String location;

        @Option(names = "--url", paramLabel = "URL", description = "The daemon (default: FERRY_ENDPOINT, else http://127.0.0.1:9099).")
        String url;

        @Override
        public Integer call() {
            String query = "";
            if (location != null) {
                String[] bp = DaemonApi.location(location);
                query = query(bp[0], bp[1]);
            }
            try (DaemonApi daemon = new DaemonApi(url)) {
                JsonNode r = daemon.call("GET", "/_ferry/v1/cache", query, null, "list the local tier");
                System.out.printf(Locale.ROOT, "%s of %s resident at %s%n", Sizes.format(r.path("resident_bytes").asLong()),
                        Sizes.format(r.path("capacity_bytes").asLong()), daemon.base);
                if (r.path("entries").isEmpty()) {
                    System.out.println(location == null ? "(nothing resident)" : "(nothing resident under " + location + ")");
                    return 0;
                }
                System.out.printf(Locale.ROOT, "%10s %8s %8s %10s  %s%n", "size", "objects", "blocks", "idle", "where");
                for (JsonNode e : r.path("entries")) {
                    String idle = e.path("idle_s").isNull() ? "-" : String.format(Locale.ROOT, "%.0f s", e.path("idle_s").asDouble());
                    System.out.printf(Locale.ROOT, "%10s %8d %8d %10s  s3://%s/%s%n", Sizes.format(e.path("bytes").asLong()),
                            e.path("objects").asLong(), e.path("blocks").asLong(), idle, e.path("bucket").asText(), e.path("prefix").asText());
                }
            }
            return 0;
        }
    }

    @Command(name = "drop", mixinStandardHelpOptions = true,
            description = {"Drop what the local tier holds under s3://BUCKET/PREFIX (the object store keeps it; a later read fetches it again)."})
    static final class Drop implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "s3://BUCKET/PREFIX", description = "What to drop (a whole bucket with s3://BUCKET).")
        String location;

        @Option(names = "--url", paramLabel = "URL", description = "The daemon (default: FERRY_ENDPOINT, else http://127.0.0.1:9099).")
        String url;

        @Override
        public Integer call() {
            String[] bp = DaemonApi.location(location);
            try (DaemonApi daemon = new DaemonApi(url)) {
                JsonNode r = daemon.call("DELETE", "/_ferry/v1/cache", query(bp[0], bp[1]), null, "drop from the local tier");
                System.out.printf(Locale.ROOT, "ferry cache drop: %d blocks (%s) dropped under %s%n", r.path("dropped_blocks").asLong(),
                        Sizes.format(r.path("dropped_bytes").asLong()), location);
            }
            return 0;
        }
    }
}
