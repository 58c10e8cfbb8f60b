package dev.ferry.serve.membership;

import dev.ferry.store.shared.GroupStore;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Asks every other member of the group, every {@code interval}, whether it answers ({@code GET /_ferry/},
 * the status page: public, static, served by the daemon's own front), giving each ask two intervals to
 * answer. A member that does not answer is marked down in the {@link GroupStore}, so reads skip it for the
 * next owner in their ranking even before one of them fails on it; one that answers again is marked up. A
 * killed daemon (its port refuses connections) is seen within one interval; one that hangs, or whose host is
 * gone, after two asks in a row go unanswered (within about six intervals: 3 s by default), so one slow answer
 * on a busy machine does not move a member's share. Reads find a dead member sooner: the first read that fails
 * on it marks it down. The cost is one small request per member per interval. Thread-safe.
 */
public final class MemberProber implements AutoCloseable {
    private final GroupStore group;
    private final Duration interval;
    /** How long one ask may take: two intervals, so a busy machine's slow answer is not taken for a dead member. */
    private final Duration timeout;
    private final HttpClient http;
    private final Set<String> asking = ConcurrentHashMap.newKeySet();
    /** Unanswered asks in a row, per member: a refused connection marks it down at once, a timeout the second time. */
    private final Map<String, Integer> misses = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ferry-group-probe");
        t.setDaemon(true);
        return t;
    });

    private MemberProber(GroupStore group, Duration interval) {
        this.group = group;
        this.interval = interval;
        this.timeout = interval.multipliedBy(2);
        this.http = HttpClient.newBuilder().connectTimeout(timeout).executor(Executors.newVirtualThreadPerTaskExecutor()).build();
    }

    /** Starts probing {@code group}'s members every {@code interval}. */
    public static MemberProber start(GroupStore group, Duration interval) {
        MemberProber p = new MemberProber(group, interval);
        p.timer.scheduleWithFixedDelay(p::round, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return p;
    }

    private void round() {
        String self = group.self();
        for (String url : group.members()) {
            if (url.equals(self) || !asking.add(url)) {
                continue; // this node, or still waiting on the last ask
            }
            HttpRequest req = HttpRequest.newBuilder(URI.create(url).resolve("/_ferry/")).timeout(timeout).GET().build();
            http.sendAsync(req, HttpResponse.BodyHandlers.discarding()).whenComplete((r, e) -> {
                asking.remove(url);
                if (e == null && r.statusCode() < 500) {
                    misses.remove(url);
                    group.answered(url);
                    return;
                }
                Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                int n = misses.merge(url, 1, Integer::sum);
                if (cause instanceof ConnectException || n >= 2) {
                    group.unanswered(url, cause != null ? "no answer to a probe: " + cause.getClass().getSimpleName()
                            : "a probe got " + r.statusCode());
                }
            });
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        http.shutdownNow();
    }
}
