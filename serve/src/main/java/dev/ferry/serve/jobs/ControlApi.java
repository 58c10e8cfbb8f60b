package dev.ferry.serve.jobs;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.node.PeerLevel;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Matcher;

/**
 * ferry's own API under {@code /_ferry/} (docs/daemon.md, "ferry's own API"), routed by resource: the jobs
 * ({@link JobsApi}), the status and its page ({@link StatusApi}), the write-back fence ({@link FlushApi}), the local
 * tier's contents and warming it ({@link TierApi}) and Prometheus metrics ({@link MetricsApi}). JSON in and out; errors as {@code {"error": {"code": ..., "message": ...}}}.
 * Thread-safe.
 */
public final class ControlApi {
    private final JobsApi jobs;
    private final StatusApi status;
    private final FlushApi flush;
    private final MetricsApi metrics;
    private final TierApi tier;
    private final DecodedApi decoded;
    /** This daemon's write-back journal, as peers ask it ({@code GET /_ferry/v1/journal}); null without write-back. */
    private final String journal;
    static final String JOURNAL = "/_ferry/v1/journal";

    /**
     * The API over {@code node} and its {@code jobs}; {@code registry}: the daemon's meters, scraped as they are; for the
     * status, {@code served}: what the front has served, and {@code endpoint}: where it listens (known once it is bound).
     */
    public ControlApi(Node node, JobRegistry jobs, PrometheusMeterRegistry registry, Supplier<ServeSnapshot> served, Supplier<URI> endpoint) {
        this(node, jobs, registry, served, endpoint, null);
    }

    /** As above; {@code peers}: who holds copies of this node's writes (the fence and the status say so), or null. */
    public ControlApi(Node node, JobRegistry jobs, PrometheusMeterRegistry registry, Supplier<ServeSnapshot> served, Supplier<URI> endpoint,
            PeerLevel peers) {
        this.jobs = new JobsApi(node, jobs);
        this.decoded = new DecodedApi(node, jobs);
        jobs.decodedAdvice(decoded::advice);
        this.status = new StatusApi(node, jobs, served, endpoint, peers, decoded);
        this.flush = new FlushApi(node.stack().writeBack(), peers);
        this.metrics = new MetricsApi(registry);
        this.tier = new TierApi(node, jobs);
        this.journal = node.stack().writeBack() == null ? null : node.stack().writeBack().journalId();
    }

    /** The most bytes a request's body may have on {@code path} under {@code /_ferry/} (a decoded sample's). */
    public static long maxBodyBytes(String path, long otherwise) {
        return DecodedApi.owns(path) ? Math.max(otherwise, DecodedApi.MAX_ENTRY_BYTES) : otherwise;
    }

    /** Read-only views anyone who can reach the port may see, even when requests must be signed. */
    public boolean isPublic(HttpMethod method, String path) {
        return method.equals(HttpMethod.GET)
                && (StatusApi.isPage(path) || path.equals(MetricsApi.PATH) || path.equals(StatusApi.PATH) || path.equals(JOURNAL));
    }

    /**
     * Requests whose work may take seconds (a job registration) and stops when its client goes: the front
     * watches their connection while they run. A client that half-closes its side there loses the answer.
     */
    public boolean watchesClient(HttpMethod method, String path) {
        return method.equals(HttpMethod.POST) && path.equals(JobsApi.JOBS);
    }

    /** An error as this API answers it: its status, and {@code {"error": {"code": ..., "message": ...}}}. */
    public static Reply.Full error(S3Error e) {
        ObjectNode root = ApiJson.JSON.createObjectNode();
        root.putObject("error").put("code", e.code()).put("message", e.getMessage());
        return Reply.json(HttpResponseStatus.valueOf(e.status()), root.toString());
    }

    /** Answers a request under {@code /_ferry/}; work for a client that has {@code gone} stops. */
    public Reply handle(HttpMethod method, String path, Map<String, List<String>> query, byte[] body, ClientGone gone)
            throws S3Error, IOException {
        try {
            return route(method, path, query, body, gone);
        } catch (IllegalArgumentException e) {
            throw S3Error.badRequest("InvalidArgument", e.getMessage());
        }
    }

    private Reply route(HttpMethod method, String path, Map<String, List<String>> query, byte[] body, ClientGone gone)
            throws S3Error, IOException {
        boolean get = method.equals(HttpMethod.GET);
        boolean post = method.equals(HttpMethod.POST);
        if (get && StatusApi.isPage(path)) {
            return status.page();
        }
        if (get && path.equals(MetricsApi.PATH)) {
            return metrics.scrape();
        }
        if (get && path.equals(StatusApi.PATH)) {
            return status.status();
        }
        if (get && path.equals(JOURNAL)) { // who this daemon is to the peers that keep copies of its writes
            ObjectNode out = ApiJson.JSON.createObjectNode();
            out.put("journal", journal);
            return Reply.json(HttpResponseStatus.OK, out.toString());
        }
        if (post && path.equals(JobsApi.JOBS)) {
            return jobs.register(body, gone);
        }
        if (post && path.equals(FlushApi.PATH)) {
            return flush.flush(query);
        }
        if (DecodedApi.owns(path)) {
            return decoded.route(method, path, query, body);
        }
        if (TierApi.owns(path)) {
            return tier.route(method, path, query, body);
        }
        Matcher job = JobsApi.JOB_PATH.matcher(path);
        if (job.matches()) {
            return jobs.job(method, path, job.group(1), job.group(2), query, body);
        }
        String allowed = StatusApi.isPage(path) || path.equals(MetricsApi.PATH) || path.equals(StatusApi.PATH) || path.equals(JOURNAL) ? "GET"
                : path.equals(JobsApi.JOBS) || path.equals(FlushApi.PATH) ? "POST" : null;
        if (allowed != null) {
            throw new S3Error(405, "MethodNotAllowed", method + " is not allowed on " + path + ": it answers " + allowed);
        }
        throw new S3Error(404, "NoSuchEndpoint", "ferry has no API at " + method + " " + path + "; see ferry's own API in docs/daemon.md");
    }
}
