package dev.ferry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ferry.cli.errors.UserError;
import dev.ferry.time.Clock;
import dev.ferry.util.Sizes;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ferry warm}: loads a prefix, or a manifest's objects, into a daemon's local tier before a job starts (JuiceFS's
 * {@code warmup}, Alluxio's {@code load}), through the daemon's {@code POST /_ferry/v1/warm}; shows its progress until
 * it is done. Warming again fetches only what is not resident: it is idempotent, and resumes one cut short. With
 * {@code --group}, every member of the daemon's group loads the objects it owns ({@code "owned": true}), so the
 * dataset crosses from the store once and each member serves its share to the others.
 */
@Command(name = "warm", mixinStandardHelpOptions = true,
        description = {"Load a prefix (s3://BUCKET/PREFIX), a manifest's objects (--manifest BUCKET/KEY) or what a registered job reads "
                + "in an epoch (--job NAME [--epoch N]) into a daemon's local tier.",
                "Shows objects, bytes, rate and time left; what is already resident is not fetched again. Exit 1 if it fails."})
final class WarmCommand implements Callable<Integer> {
    @Parameters(index = "0", arity = "0..1", paramLabel = "s3://BUCKET/PREFIX", description = "The objects to load.")
    String location;

    @Option(names = "--manifest", paramLabel = "BUCKET/KEY", description = "Load the objects of this manifest (as ferry index wrote it) instead.")
    String manifest;

    @Option(names = "--job", paramLabel = "NAME", description = "Load the blocks this registered job reads on the daemon's node in an epoch, "
            + "in the order it reads them.")
    String job;

    @Option(names = "--epoch", paramLabel = "N", description = "With --job: the epoch (default: the job's current one).")
    Integer epoch;

    @Option(names = "--url", paramLabel = "URL", description = "The daemon (default: FERRY_ENDPOINT, else http://127.0.0.1:9099).")
    String url;

    @Option(names = "--group", description = "Warm every member of the daemon's group: each loads the objects it owns "
            + "(the data crosses from the object store once), or with --job its own node's share of the epoch.")
    boolean group;

    /** One daemon's warm: where it runs and its last progress. */
    private record Member(DaemonApi daemon, String id, JsonNode progress) {
    }

    @Override
    public Integer call() throws Exception {
        if ((location != null ? 1 : 0) + (manifest != null ? 1 : 0) + (job != null ? 1 : 0) != 1) {
            throw new UserError("ferry warm needs one of s3://BUCKET/PREFIX, --manifest BUCKET/KEY or --job NAME");
        }
        if (epoch != null && (job == null || epoch < 1)) {
            throw new UserError(job == null ? "--epoch goes with --job" : "--epoch must be at least 1, not " + epoch);
        }
        ObjectNode body = JsonNodeFactory.instance.objectNode();
        if (job != null) {
            body.put("job", job);
            if (epoch != null) {
                body.put("epoch", epoch);
            }
        } else if (manifest != null) {
            body.put("manifest_key", manifest);
        } else {
            String[] bp = DaemonApi.location(location);
            body.put("bucket", bp[0]).put("prefix", bp[1]);
        }
        if (group && job == null) {
            body.put("owned", true); // a job's epoch on each member is that member's node's share already
        }
        List<DaemonApi> members = new ArrayList<>(); // opened here for --group, closed below
        try (DaemonApi first = new DaemonApi(url)) {
            if (group) {
                for (String member : members(first)) {
                    members.add(new DaemonApi(member));
                }
            }
            List<Member> warms = new ArrayList<>();
            for (DaemonApi d : group ? members : List.of(first)) {
                JsonNode p = d.call("POST", "/_ferry/v1/warm", "", body.toString(), "start warming");
                warms.add(new Member(d, p.path("id").asText(), p));
            }
            return follow(warms);
        } finally {
            members.forEach(DaemonApi::close);
        }
    }

    /** The URLs of the group's members, as the daemon at {@code first} knows them; one sentence when it has none. */
    private static List<String> members(DaemonApi first) {
        JsonNode status = first.call("GET", "/_ferry/v1/status", "", null, "read the group");
        List<String> out = new ArrayList<>();
        for (JsonNode m : status.path("group").path("members")) {
            out.add(m.path("url").asText());
        }
        if (out.isEmpty()) {
            throw new UserError("the daemon at " + first.base + " is in no group (no --group, or no member found yet): warm it without --group", 1);
        }
        return out;
    }

    private int follow(List<Member> warms) throws InterruptedException {
        boolean terminal = System.console() != null;
        Clock clock = Clock.system();
        long lastLine = 0;
        while (!warms.stream().allMatch(w -> finished(w.progress()))) {
            Thread.sleep(200);
            for (int i = 0; i < warms.size(); i++) {
                Member w = warms.get(i);
                if (!finished(w.progress())) {
                    warms.set(i, new Member(w.daemon(), w.id(), w.daemon().call("GET", "/_ferry/v1/warm/" + w.id(), "", null, "follow the warm")));
                }
            }
            JsonNode sum = sum(warms);
            long now = clock.nanoTime();
            if (terminal) {
                System.out.print("\r" + line(sum) + "   ");
                System.out.flush();
            } else if (now - lastLine > 5_000_000_000L) {
                System.out.println(line(sum));
                lastLine = now;
            }
        }
        if (terminal) {
            System.out.println();
        }
        for (Member w : warms) {
            if (w.progress().path("state").asText().equals("failed")) {
                throw new UserError("warming " + w.progress().path("source").asText() + (warms.size() > 1 ? " on " + w.daemon().base : "")
                        + " failed: " + w.progress().path("error").asText(), 1);
            }
        }
        if (warms.size() > 1) {
            for (Member w : warms) {
                System.out.println("  " + w.daemon().base + ": " + summary(w.progress()));
            }
        }
        JsonNode p = sum(warms);
        System.out.println("ferry warm: " + warms.get(0).progress().path("source").asText() + (warms.size() > 1 ? " on " + warms.size() + " members" : "")
                + ": " + summary(p));
        if (p.path("objects_not_fitting").asLong() > 0) {
            System.out.printf(Locale.ROOT, "  %d %s (%s) did not fit: the tier keeps a tenth of its capacity free (see ferry cache ls)%n",
                    p.path("objects_not_fitting").asLong(), p.path("unit").asText(), Sizes.format(p.path("bytes_not_fitting").asLong()));
        }
        return 0;
    }

    private static boolean finished(JsonNode p) {
        return p.path("state").asText().equals("done") || p.path("state").asText().equals("failed");
    }

    private static final List<String> SUMMED = List.of("objects_total", "bytes_total", "objects_done", "bytes_done", "bytes_fetched",
            "objects_not_fitting", "bytes_not_fitting", "egress_bytes");

    /** The members' progress as one: counts added, the longest time, the state of the least advanced. */
    static JsonNode sum(List<Member> warms) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        double seconds = 0;
        double cost = 0;
        for (Member w : warms) {
            JsonNode p = w.progress();
            for (String field : SUMMED) {
                out.put(field, out.path(field).asLong() + p.path(field).asLong());
            }
            seconds = Math.max(seconds, p.path("seconds").asDouble());
            cost += p.path("egress_cost_usd").asDouble();
        }
        String state = warms.stream().map(w -> w.progress().path("state").asText())
                .filter(st -> !st.equals("done")).findFirst().orElse("done");
        return out.put("seconds", seconds).put("egress_cost_usd", cost).put("state", state)
                .put("unit", warms.get(0).progress().path("unit").asText("objects"));
    }

    /** What a finished warm did, in one line. */
    private static String summary(JsonNode p) {
        double seconds = Math.max(1e-3, p.path("seconds").asDouble());
        return String.format(Locale.ROOT, "%d %s, %s resident in %.1f s (%s/s); %s fetched into the tier (egress from the object store %s, $%.4f)",
                p.path("objects_done").asLong(), p.path("unit").asText("objects"), Sizes.format(p.path("bytes_done").asLong()), seconds,
                Sizes.format((long) (p.path("bytes_fetched").asLong() / seconds)), Sizes.format(p.path("bytes_fetched").asLong()),
                Sizes.format(p.path("egress_bytes").asLong()), p.path("egress_cost_usd").asDouble());
    }

    /** One progress line: objects and bytes done of the total, rate, time left. */
    static String line(JsonNode p) {
        long total = p.path("bytes_total").asLong() - p.path("bytes_not_fitting").asLong();
        long done = p.path("bytes_done").asLong();
        double seconds = Math.max(1e-3, p.path("seconds").asDouble());
        double rate = done / seconds;
        String left = rate <= 0 || done >= total ? "" : String.format(Locale.ROOT, ", %.0f s left", (total - done) / rate);
        return String.format(Locale.ROOT, "%s: %d/%d %s, %s of %s, %s/s%s", p.path("state").asText(), p.path("objects_done").asLong(),
                p.path("objects_total").asLong() - p.path("objects_not_fitting").asLong(), p.path("unit").asText("objects"),
                Sizes.format(done), Sizes.format(total),
                Sizes.format((long) rate), left);
    }
}
