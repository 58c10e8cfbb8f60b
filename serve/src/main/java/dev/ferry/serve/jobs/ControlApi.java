package dev.ferry.serve.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ferry.cache.CacheStats;
import dev.ferry.metrics.EpochReport;
import dev.ferry.plan.Homes;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Prefetcher;
import dev.ferry.plan.World;
import dev.ferry.serve.node.Counters;
import dev.ferry.serve.node.HintedStore;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.node.ServeStats;
import dev.ferry.serve.protocol.Keys;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.serve.s3.S3Service;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.StoreException;
import dev.ferry.store.chain.MeterSnapshot;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.store.tier.GroupStore;
import dev.ferry.writeback.FlushResult;
import dev.ferry.writeback.Scratch;
import dev.ferry.writeback.WriteBackStats;
import dev.ferry.writeback.WriteStatus;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.net.URI;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * ferry's own API under {@code /_ferry/} (docs/daemon.md, "ferry's own API"): job plans, consumer progress, status, the
 * write-back fence, Prometheus metrics and the status page. JSON in and out; errors as
 * {@code {"error": {"code": ..., "message": ...}}}.
 */
public final class ControlApi {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern JOB_PATH = Pattern.compile("/_ferry/v1/jobs/([A-Za-z0-9._-]{1,128})/(order|progress|checkpoint)");
    private static final Pattern JOB_NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");
    private static final int MAX_EXPLICIT_KEYS = 1_000_000;

    private final Node node;
    private final JobRegistry jobs;
    private final Supplier<URI> endpoint;
    private final byte[] page;

    /** {@code endpoint}: where the front listens, for the status (known once it is bound). */
    public ControlApi(Node node, JobRegistry jobs, Supplier<URI> endpoint) {
        this.node = node;
        this.jobs = jobs;
        this.endpoint = endpoint;
        try (InputStream in = ControlApi.class.getResourceAsStream("status.html")) {
            this.page = in.readAllBytes();
        } catch (IOException | NullPointerException e) {
            throw new IllegalStateException("the status page is missing from the daemon's resources", e);
        }
    }

    /** Read-only views anyone who can reach the port may see, even when requests must be signed. */
    public boolean isPublic(HttpMethod method, String path) {
        return method.equals(HttpMethod.GET)
                && (path.equals("/_ferry") || path.equals("/_ferry/") || path.equals("/_ferry/metrics") || path.equals("/_ferry/v1/status"));
    }

    /**
     * Requests whose work may take seconds (a job registration) and stops when its client goes: the front
     * watches their connection while they run. A client that half-closes its side there loses the answer.
     */
    public boolean watchesClient(HttpMethod method, String path) {
        return method.equals(HttpMethod.POST) && path.equals("/_ferry/v1/jobs");
    }

    public static Reply.Full error(S3Error e) {
        ObjectNode root = JSON.createObjectNode();
        root.putObject("error").put("code", e.code()).put("message", e.getMessage());
        return Reply.json(HttpResponseStatus.valueOf(e.status()), root.toString());
    }

    public Reply handle(HttpMethod method, String path, Map<String, List<String>> query, HttpHeaders headers, byte[] body)
            throws S3Error, IOException {
        return handle(method, path, query, headers, body, ClientGone.NEVER);
    }

    /** As {@link #handle(HttpMethod, String, Map, HttpHeaders, byte[])}; work for a client that has {@code gone} stops. */
    public Reply handle(HttpMethod method, String path, Map<String, List<String>> query, HttpHeaders headers, byte[] body,
            ClientGone gone) throws S3Error, IOException {
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
        if (get && (path.equals("/_ferry") || path.equals("/_ferry/"))) {
            HttpHeaders h = new DefaultHttpHeaders();
            h.set("Content-Type", "text/html; charset=utf-8");
            return new Reply.Full(HttpResponseStatus.OK, h, page, false);
        }
        if (get && path.equals("/_ferry/metrics")) {
            HttpHeaders h = new DefaultHttpHeaders();
            h.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            return new Reply.Full(HttpResponseStatus.OK, h, S3Service.utf8(node.registry().scrape()), false);
        }
        if (get && path.equals("/_ferry/v1/status")) {
            return Reply.json(HttpResponseStatus.OK, status().toString());
        }
        if (post && path.equals("/_ferry/v1/jobs")) {
            try {
                return Reply.json(HttpResponseStatus.OK, register(parse(body), gone).toString());
            } catch (CancellationException e) {
                throw new S3Error(499, "ClientClosedRequest", e.getMessage()); // answers nobody: the connection is closed
            }
        }
        if (post && path.equals("/_ferry/v1/flush")) {
            return flush(query);
        }
        Matcher m = JOB_PATH.matcher(path);
        if (m.matches()) {
            RunningJob run = jobs.jobs().get(m.group(1));
            if (run == null) {
                throw new S3Error(404, "NoSuchJob", "no job named '" + m.group(1) + "' is registered");
            }
            if (get && m.group(2).equals("order")) {
                return Reply.json(HttpResponseStatus.OK, order(run.job, query).toString());
            }
            if (get && m.group(2).equals("checkpoint")) {
                return Reply.json(HttpResponseStatus.OK, checkpoint(run.job, query).toString());
            }
            if (post && m.group(2).equals("progress")) {
                progress(run, parse(body));
                run.advice.refresh(run, node.counters(), node.egressCostPerByte());
                ObjectNode answer = JSON.createObjectNode().put("ok", true);
                run.advice.findings().forEach(answer.putArray("advice")::add);
                return Reply.json(HttpResponseStatus.OK, answer.toString());
            }
            throw new S3Error(405, "MethodNotAllowed", method + " is not allowed on " + path);
        }
        throw new S3Error(404, "NoSuchEndpoint", "ferry has no API at " + method + " " + path + "; see ferry's own API in docs/daemon.md");
    }

    private static JsonNode parse(byte[] body) throws S3Error {
        if (body.length == 0) {
            throw S3Error.badRequest("InvalidJson", "the request needs a JSON body");
        }
        try {
            JsonNode n = JSON.readTree(body);
            if (n == null || !n.isObject()) {
                throw S3Error.badRequest("InvalidJson", "the body must be a JSON object");
            }
            return n;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw S3Error.badRequest("InvalidJson", "the body is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw S3Error.badRequest("InvalidJson", "the body cannot be read as JSON: " + e.getMessage());
        }
    }

    private static long number(JsonNode n, String field, long fallback, long min, long max) throws S3Error {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            if (fallback == Long.MIN_VALUE) {
                throw S3Error.badRequest("InvalidArgument", field + " is missing");
            }
            return fallback;
        }
        try {
            return ManifestJson.wholeNumber(v, field, min, max);
        } catch (IllegalArgumentException e) {
            throw S3Error.badRequest("InvalidArgument", e.getMessage());
        }
    }

    private static long param(Map<String, List<String>> query, String name, long fallback, long min, long max) throws S3Error {
        List<String> v = query.get(name);
        if (v == null || v.isEmpty()) {
            if (fallback == Long.MIN_VALUE) {
                throw S3Error.badRequest("InvalidArgument", name + " is missing from the query");
            }
            return fallback;
        }
        try {
            long x = Long.parseLong(v.get(0));
            if (x < min || x > max) {
                throw S3Error.badRequest("InvalidArgument", name + " must be " + min + " to " + max + ": " + x);
            }
            return x;
        } catch (NumberFormatException e) {
            throw S3Error.badRequest("InvalidArgument", name + " must be a whole number, not '" + v.get(0) + "'");
        }
    }

    /**
     * Registers a job. Everything a plan will cost is bounded ({@link JobLimits}) from the request alone, before
     * any plan is built; then the plans and the prediction are built, checking between steps that the client
     * still waits.
     */
    private ObjectNode register(JsonNode req, ClientGone gone) throws S3Error, IOException {
        String name = req.path("job").asText("");
        if (!JOB_NAME.matcher(name).matches()) {
            throw S3Error.badRequest("InvalidArgument", "job must be 1 to 128 letters, digits, '.', '_' or '-': '" + name + "'");
        }
        int batch = (int) number(req, "batch_size", 1, 1, 1 << 20);
        JsonNode resumeNode = req.get("resume");
        if (resumeNode != null && !resumeNode.isNull() && !resumeNode.isObject()) {
            throw S3Error.badRequest("InvalidArgument", "resume must be an object: the answer of GET /_ferry/v1/jobs/{job}/checkpoint");
        }
        if (resumeNode != null && resumeNode.isNull()) {
            resumeNode = null;
        }
        Job job;
        Job.Resume resume = null;
        if (req.has("ranks")) {
            if (resumeNode != null) {
                throw S3Error.badRequest("InvalidArgument", "resume applies to a job with a manifest, not to one given as ranks");
            }
            job = Job.explicit(name, explicitRanks(req.get("ranks")), batch);
        } else {
            Manifest manifest;
            try {
                if (req.has("manifest")) {
                    manifest = ManifestJson.parse(req.get("manifest"), "manifest");
                } else if (req.has("manifest_key")) {
                    ObjectKey key = objectKey(req.get("manifest_key").asText(""), "manifest_key");
                    long size = node.reads().head(key).size();
                    if (size > JobLimits.MAX_MANIFEST_BYTES) {
                        throw S3Error.badRequest("InvalidArgument", "manifest_key " + key + " is " + size
                                + " bytes: a manifest may be at most " + JobLimits.MAX_MANIFEST_BYTES + " bytes");
                    }
                    byte[] bytes = node.reads().readBytes(key, null);
                    gone.check();
                    manifest = ManifestJson.read(bytes, key.toString());
                } else {
                    throw S3Error.badRequest("InvalidArgument", "a job needs manifest, manifest_key or ranks");
                }
            } catch (ManifestJson.BadManifestException e) {
                throw S3Error.badRequest("InvalidArgument", e.getMessage()); // the client's manifest, not the daemon, is at fault
            }
            JsonNode w = req.path("world");
            World world;
            try {
                world = new World((int) number(w, "nodes", 1, 1, 100_000), (int) number(w, "ranks_per_node", 1, 1, 4096),
                        (int) number(w, "workers_per_rank", 1, 1, 1024));
            } catch (IllegalArgumentException e) {
                throw S3Error.badRequest("InvalidArgument", "world: " + e.getMessage());
            }
            int node = (int) number(req, "node", 0, 0, world.nodes() - 1);
            // bounded before anything is built or summed (the tier-fitting shuffle block below adds the sizes)
            JobLimits.check(manifest, world, PlanConfig.DEFAULT.uneven(), this.node.config().blockSize());
            int epochs = (int) number(req, "epochs", 0, 0, 1_000_000);
            resume = resumeNode == null ? null : resumeOf(resumeNode, manifest.totalSamples());
            PlanConfig plan = planOf(req, manifest, world, this.node.config().cacheSize());
            if (resume != null) {
                plan = withResumedCanonical(plan, resume);
            }
            job = Job.planned(name, manifest, plan, world, node, batch, resume).withPlannedEpochs(epochs);
        }
        JsonNode replace = req.get("replace");
        if (replace != null && !replace.isNull() && !replace.isBoolean()) {
            throw S3Error.badRequest("InvalidArgument", "replace must be true or false, not " + replace);
        }
        JobRegistry.Registration registration;
        try {
            registration = jobs.register(job, replace != null && replace.asBoolean(), gone);
        } catch (JobRegistry.ConflictException e) {
            throw new S3Error(409, "JobConflict", e.getMessage());
        }
        RunningJob run = registration.run();
        job = run.job;
        ObjectNode out = JSON.createObjectNode();
        out.put("job", name).put("registration", registration.outcome().label()).put("samples", job.samplesPerEpoch()).put("ranks", job.ranks()).put("batch_size", batch)
                .put("steps_per_epoch", ((job.samplesPerEpoch() + job.ranks() - 1) / job.ranks() + batch - 1) / batch)
                .put("planned_blocks", run.plannedBlocks());
        planFields(out, job, 1);
        if (job.plan() != null && job.plan().partition() != PlanConfig.Partition.GLOBAL) {
            homesJson(out.putObject("homes"), job.homes());
            if (resume != null) {
                out.put("moved_canonical_nodes", resume.homes().moved(job.homes()));
            }
        }
        ArrayNode predicted = out.putArray("predicted_egress_bytes");
        for (int e = 1; e <= JobAdvice.PREDICTED_EPOCHS && run.advice.predictedEgress(e) >= 0; e++) {
            predicted.add(run.advice.predictedEgress(e));
        }
        return out;
    }

    /**
     * The plan's settings from a registration: {@code seed}, {@code partition} (node, global or auto: node for
     * more than one node), {@code canonical_nodes} (0: the world's nodes; give the count the job started
     * with when it resumes on another world), {@code mix_fraction} and {@code shuffle_block_shards} (default: what
     * this node's tier can serve, {@link PlanConfig#shuffleBlockFittingTier}).
     */
    private static PlanConfig planOf(JsonNode req, Manifest manifest, World world, long tierBytes) throws S3Error {
        try {
            long meanShard = manifest.shards().isEmpty() ? 0 : manifest.totalBytes() / manifest.shards().size();
            int fitting = PlanConfig.shuffleBlockFittingTier(tierBytes, manifest.totalBytes() / Math.max(1, world.nodes()), meanShard);
            PlanConfig plan = PlanConfig.DEFAULT.withSeed(number(req, "seed", 0, Long.MIN_VALUE + 1, Long.MAX_VALUE))
                    .withShuffleBlockShards((int) number(req, "shuffle_block_shards", fitting, 1, 1 << 20));
            if (req.has("partition")) {
                plan = plan.withPartition(PlanConfig.Partition.parse(req.get("partition").asText("")));
            }
            int canonical = (int) number(req, "canonical_nodes", 0, 0, 100_000);
            if (canonical > 0) {
                if (plan.partition() == PlanConfig.Partition.GLOBAL) {
                    throw S3Error.badRequest("InvalidArgument", "canonical_nodes applies to the node partition, not to global");
                }
                plan = plan.withCanonicalNodes(canonical);
            }
            JsonNode mix = req.get("mix_fraction");
            if (mix != null && !mix.isNull()) {
                if (!mix.isNumber()) {
                    throw S3Error.badRequest("InvalidArgument", "mix_fraction must be a number from 0 to 1");
                }
                plan = plan.withMixFraction(mix.asDouble());
            }
            return plan;
        } catch (IllegalArgumentException e) {
            throw S3Error.badRequest("InvalidArgument", e.getMessage());
        }
    }

    /**
     * A resume from a registration: the checkpoint {@code GET .../checkpoint} answered, {@code {"epoch", "position",
     * "canonical_nodes", "homes": {"nodes", "node_of"}, "round_homes": {...}}}; {@code homes} is required, the
     * rest optional ({@code round_homes} needs {@code epoch} and {@code position}).
     */
    private static Job.Resume resumeOf(JsonNode resume, long samples) throws S3Error {
        JsonNode h = resume.get("homes");
        if (h == null || h.isNull()) {
            throw S3Error.badRequest("InvalidArgument", "resume needs homes ({\"nodes\": N, \"node_of\": [...]}), as the checkpoint answered them");
        }
        Homes homes = homesOf(h, "resume.homes");
        boolean hasEpoch = resume.hasNonNull("epoch");
        boolean hasPosition = resume.hasNonNull("position");
        if (hasEpoch != hasPosition) {
            throw S3Error.badRequest("InvalidArgument", "resume needs both epoch and position, or neither");
        }
        int epoch;
        long position;
        try {
            epoch = hasEpoch ? (int) ManifestJson.wholeNumber(resume.get("epoch"), "resume.epoch", 1, Integer.MAX_VALUE) : 0;
            position = hasPosition ? ManifestJson.wholeNumber(resume.get("position"), "resume.position", 0, samples) : 0;
        } catch (IllegalArgumentException e) {
            throw S3Error.badRequest("InvalidArgument", e.getMessage());
        }
        Homes round = null;
        JsonNode r = resume.get("round_homes");
        if (r != null && !r.isNull()) {
            if (!hasEpoch) {
                throw S3Error.badRequest("InvalidArgument", "resume.round_homes needs resume.epoch and resume.position (where the round it orders is)");
            }
            round = homesOf(r, "resume.round_homes");
            if (round.canonical() != homes.canonical()) {
                throw S3Error.badRequest("InvalidArgument", "resume.round_homes.node_of has " + round.canonical()
                        + " entries but resume.homes.node_of has " + homes.canonical() + ": both list every canonical node");
            }
        }
        JsonNode c = resume.get("canonical_nodes");
        if (c != null && !c.isNull() && (!c.canConvertToInt() || c.asInt() != homes.canonical())) {
            throw S3Error.badRequest("InvalidArgument", "resume.canonical_nodes is " + c + " but resume.homes.node_of has " + homes.canonical()
                    + " entries: one per canonical node");
        }
        return new Job.Resume(homes, epoch, position, round);
    }

    /**
     * The plan's canonical node count from a resume: its homes' count when the registration does not say, and
     * a clear refusal when it says otherwise or the partition is global. A resume is of the node partition, so
     * {@code auto} stays the node partition even on one node (where a fresh job would read by the global plan).
     */
    private static PlanConfig withResumedCanonical(PlanConfig plan, Job.Resume resume) throws S3Error {
        int canonical = resume.homes().canonical();
        if (plan.partition() == PlanConfig.Partition.GLOBAL) {
            throw S3Error.badRequest("InvalidArgument", "resume.homes applies to the node partition, not to global");
        }
        if (plan.canonicalNodes() > 0 && plan.canonicalNodes() != canonical) {
            throw S3Error.badRequest("InvalidArgument", "resume.homes.node_of has " + canonical + " entries but canonical_nodes is "
                    + plan.canonicalNodes() + ": a resumed job keeps the canonical node count it started with");
        }
        return plan.withPartition(PlanConfig.Partition.NODE).withCanonicalNodes(canonical);
    }

    /** Homes as JSON gives them: {@code {"nodes": N, "node_of": [node of canonical node 0, ...]}}. */
    private static Homes homesOf(JsonNode n, String field) throws S3Error {
        if (!n.isObject()) {
            throw S3Error.badRequest("InvalidArgument", field + " must be an object {\"nodes\": N, \"node_of\": [...]}, not " + Uris.abbreviate(n.toString()));
        }
        JsonNode nodesNode = n.get("nodes");
        if (nodesNode == null || nodesNode.isNull()) {
            throw S3Error.badRequest("InvalidArgument", field + ".nodes is missing: the node count of the world the homes were recorded on");
        }
        int nodes;
        try {
            nodes = (int) ManifestJson.wholeNumber(nodesNode, field + ".nodes", 1, 100_000);
        } catch (IllegalArgumentException e) {
            throw S3Error.badRequest("InvalidArgument", e.getMessage());
        }
        JsonNode of = n.get("node_of");
        if (of == null || !of.isArray() || of.isEmpty()) {
            throw S3Error.badRequest("InvalidArgument", field + ".node_of must be a non-empty array with the node of each canonical node");
        }
        if (of.size() > 100_000) {
            throw S3Error.badRequest("InvalidArgument", field + ".node_of has " + of.size() + " entries: at most 100000 canonical nodes");
        }
        int[] at = new int[of.size()];
        for (int c = 0; c < at.length; c++) {
            JsonNode v = of.get(c);
            long x;
            try {
                x = ManifestJson.wholeNumber(v, field + ".node_of[" + c + "]", Integer.MIN_VALUE, Integer.MAX_VALUE);
            } catch (IllegalArgumentException e) {
                throw S3Error.badRequest("InvalidArgument", e.getMessage());
            }
            if (x < 0 || x >= nodes) {
                throw S3Error.badRequest("InvalidArgument", field + ".node_of[" + c + "] is " + x + " but " + field + ".nodes is " + nodes
                        + ": each entry must be a node from 0 to " + (nodes - 1));
            }
            at[c] = (int) x;
        }
        return Homes.parse(at, nodes);
    }

    private static void homesJson(ObjectNode out, Homes homes) {
        out.put("nodes", homes.nodes());
        ArrayNode of = out.putArray("node_of");
        for (int n : homes.toArray()) {
            of.add(n);
        }
    }

    /**
     * What to record to resume after {@code position} samples of {@code epoch}: the position, the canonical node
     * count, and for the node partition the homes and the round's homes, which a registration's {@code resume}
     * takes back as they are.
     */
    private static ObjectNode checkpoint(Job job, Map<String, List<String>> query) throws S3Error {
        int epoch = (int) param(query, "epoch", Long.MIN_VALUE, 1, Integer.MAX_VALUE);
        long position = param(query, "position", Long.MIN_VALUE, 0, job.samplesPerEpoch());
        ObjectNode out = JSON.createObjectNode();
        out.put("job", job.name).put("epoch", epoch).put("position", position);
        PlanConfig plan = job.plan();
        if (plan == null) {
            return out;
        }
        out.put("canonical_nodes", plan.canonical());
        if (plan.partition() != PlanConfig.Partition.GLOBAL) {
            homesJson(out.putObject("homes"), job.homes());
            homesJson(out.putObject("round_homes"), job.roundHomesAt(epoch, position));
        }
        return out;
    }

    /** The job's partition, canonical nodes, mix fraction and shuffle quality of {@code epoch}. */
    private static void planFields(ObjectNode out, Job job, int epoch) {
        PlanConfig plan = job.plan();
        if (plan == null) {
            return;
        }
        out.put("partition", plan.partition().label()).put("canonical_nodes", plan.canonical()).put("mix_fraction", plan.mixFraction())
                .put("shuffle_block_shards", plan.shuffleBlockShards())
                .put("global_batch_shard_mix", round(job.shardMix(epoch), 4));
    }

    private static ObjectKey objectKey(String bucketAndKey, String field) throws S3Error {
        int slash = bucketAndKey.indexOf('/');
        if (slash <= 0 || slash == bucketAndKey.length() - 1) {
            throw S3Error.badRequest("InvalidArgument", field + " must be bucket/key, not '" + Uris.abbreviate(bucketAndKey) + "'");
        }
        return ObjectKey.of(Keys.bucket(bucketAndKey.substring(0, slash)), Keys.check(bucketAndKey.substring(slash + 1)));
    }

    /** Each rank's keys, with sizes and ETags looked up (HEAD, many at a time). */
    private List<List<Job.Sample>> explicitRanks(JsonNode ranks) throws S3Error, IOException {
        if (!ranks.isArray() || ranks.isEmpty()) {
            throw S3Error.badRequest("InvalidArgument", "ranks must be a non-empty array of arrays of bucket/key");
        }
        List<List<ObjectKey>> keys = new ArrayList<>();
        int total = 0;
        for (JsonNode rank : ranks) {
            if (!rank.isArray()) {
                throw S3Error.badRequest("InvalidArgument", "each entry of ranks must be an array of bucket/key");
            }
            List<ObjectKey> mine = new ArrayList<>();
            for (JsonNode k : rank) {
                mine.add(objectKey(k.asText(""), "ranks"));
            }
            total += mine.size();
            if (total > MAX_EXPLICIT_KEYS) {
                throw S3Error.badRequest("InvalidArgument", "ranks may name at most " + MAX_EXPLICIT_KEYS + " keys");
            }
            keys.add(mine);
        }
        List<List<Future<ObjectMeta>>> heads = new ArrayList<>();
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Semaphore limit = new Semaphore(32);
            for (List<ObjectKey> rank : keys) {
                List<Future<ObjectMeta>> fs = new ArrayList<>();
                for (ObjectKey k : rank) {
                    fs.add(pool.submit(() -> {
                        limit.acquire();
                        try {
                            return node.reads().head(k);
                        } finally {
                            limit.release();
                        }
                    }));
                }
                heads.add(fs);
            }
            List<List<Job.Sample>> out = new ArrayList<>();
            int index = 0;
            for (List<Future<ObjectMeta>> rank : heads) {
                List<Job.Sample> mine = new ArrayList<>();
                for (Future<ObjectMeta> f : rank) {
                    ObjectMeta m = f.get();
                    mine.add(new Job.Sample(index++, m.key(), 0, m.size(), m.etag()));
                }
                out.add(mine);
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while looking up the job's keys");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException("cannot look up the job's keys: " + e.getCause(), e.getCause());
        }
    }

    /**
     * A worker's order. By default as spans ({@link Job.Span}: one entry per run of consecutive samples of one
     * object, each sample {@code [index, offset, length]}); {@code form=samples} gives the older form, one object
     * per sample.
     */
    private static ObjectNode order(Job job, Map<String, List<String>> query) throws S3Error {
        int epoch = (int) param(query, "epoch", 1, 1, Integer.MAX_VALUE);
        int rank = (int) param(query, "rank", 0, 0, job.ranks() - 1);
        int workers = (int) param(query, "workers", 1, 1, 1024);
        int worker = (int) param(query, "worker", 0, 0, workers - 1);
        long start = param(query, "start", 0, 0, job.samplesPerEpoch());
        List<String> forms = query.get("form");
        String form = forms == null || forms.isEmpty() ? "spans" : forms.get(0);
        if (!form.equals("spans") && !form.equals("samples")) {
            throw S3Error.badRequest("InvalidArgument", "form must be spans or samples, not '" + form + "'");
        }
        List<Job.Sample> samples;
        try {
            samples = job.order(epoch, rank, worker, workers, start);
        } catch (IllegalArgumentException e) {
            throw S3Error.badRequest("InvalidArgument", e.getMessage());
        }
        ObjectNode out = JSON.createObjectNode();
        out.put("job", job.name).put("epoch", epoch).put("rank", rank).put("worker", worker).put("workers", workers)
                .put("batch_size", job.batchSize()).put("sample_count", samples.size());
        if (form.equals("samples")) {
            ArrayNode list = out.putArray("samples");
            for (Job.Sample s : samples) {
                list.addObject().put("index", s.index()).put("bucket", s.key().bucket()).put("key", s.key().key())
                        .put("offset", s.offset()).put("length", s.length()).put("etag", s.etag());
            }
            return out;
        }
        ArrayNode list = out.putArray("spans");
        for (Job.Span span : Job.Span.of(samples)) {
            ObjectNode o = list.addObject().put("bucket", span.key().bucket()).put("key", span.key().key())
                    .put("etag", span.etag()).put("offset", span.offset()).put("length", span.length());
            ArrayNode each = o.putArray("samples");
            for (Job.Sample s : span.samples()) {
                each.addArray().add(s.index()).add(s.offset()).add(s.length());
            }
        }
        return out;
    }

    private static void progress(RunningJob run, JsonNode req) throws S3Error {
        int epoch = (int) number(req, "epoch", Long.MIN_VALUE, 1, Integer.MAX_VALUE);
        long position = number(req, "position", Long.MIN_VALUE, 0, Long.MAX_VALUE);
        long samples = number(req, "samples", 0, 0, Long.MAX_VALUE);
        number(req, "rank", 0, 0, run.job.ranks() - 1);
        JsonNode w = req.path("waits_ms");
        if (!w.isMissingNode() && !w.isArray()) {
            throw S3Error.badRequest("InvalidArgument", "waits_ms must be an array of milliseconds");
        }
        double[] waits = new double[w.size()];
        for (int i = 0; i < waits.length; i++) {
            if (!w.get(i).isNumber() || w.get(i).asDouble() < 0) {
                throw S3Error.badRequest("InvalidArgument", "waits_ms[" + i + "] must be a non-negative number of milliseconds");
            }
            waits[i] = w.get(i).asDouble();
        }
        run.progress(epoch, position, samples, waits);
    }

    private Reply flush(Map<String, List<String>> query) throws S3Error, IOException {
        long timeoutMs = param(query, "timeout_ms", 600_000, 0, 86_400_000);
        ObjectNode out = JSON.createObjectNode();
        if (node.writeBack() == null) {
            out.put("complete", true).put("write_back", false).putArray("writes");
            return Reply.json(HttpResponseStatus.OK, out.toString());
        }
        FlushResult r = node.writeBack().flush(Duration.ofMillis(timeoutMs));
        out.put("complete", r.complete()).put("write_back", true).put("first_error", r.firstError());
        ArrayNode writes = out.putArray("writes");
        for (WriteStatus s : r.writes()) {
            ObjectNode w = writes.addObject().put("bucket", s.key().bucket()).put("key", s.key().key()).put("size", s.size())
                    .put("durability", s.durability().name().toLowerCase(Locale.ROOT)).put("error", s.error());
            if (s.delete()) {
                w.put("delete", true);
            }
        }
        // 200 when everything before the fence is durable; 504 on timeout, 502 when an upload was refused
        HttpResponseStatus status = r.firstError() != null ? HttpResponseStatus.BAD_GATEWAY
                : r.complete() ? HttpResponseStatus.OK : HttpResponseStatus.GATEWAY_TIMEOUT;
        return Reply.json(status, out.toString());
    }

    // ---- status ------------------------------------------------------------------------------------

    ObjectNode status() {
        Counters now = node.counters();
        ObjectNode root = JSON.createObjectNode();
        root.putObject("daemon").put("endpoint", endpoint.get().toString()).put("upstream", node.upstreamDescription())
                .put("uptime_s", round(node.uptimeSeconds(), 1)).put("block_size", node.config().blockSize());
        CacheStats c = now.cache();
        MeterSnapshot m = now.meter();
        ObjectNode tiers = root.putObject("tiers");
        tiers.putObject("local").put("capacity_bytes", node.config().cacheSize()).put("resident_bytes", c.residentBytes())
                .put("resident_blocks", c.residentBlocks()).put("hits", c.hits()).put("misses", c.misses())
                .put("hit_rate", round(c.hitRate(), 4)).put("hit_rate_bytes", round(c.byteHitRate(), 4))
                .put("bytes_from_cache", c.bytesFromCache()).put("bytes_from_upstream", c.bytesFromUpstream())
                .put("prefetched_bytes", c.prefetchedBytes()).put("evicted_capacity", c.evictedCapacity())
                .put("evicted_corrupt", c.evictedCorrupt()).put("verified_blocks", c.verifiedBlocks()).put("write_failures", c.writeFailures()).put("pass_through", c.passThrough());
        ObjectNode origin = tiers.putObject("origin");
        origin.put("egress_bytes", m.egressBytes()).put("requests", m.totalRequests())
                .put("throttled", m.failures(StoreException.Kind.THROTTLED))
                .put("cost_usd", round(m.estimatedCostUsd(), 6)).put("first_byte_ms_p50", round(m.firstByteP50Micros() / 1000.0, 2));
        ObjectNode byOp = origin.putObject("requests_by_op"); // HEADs and GETs are billed alike: each is shown
        for (MeteredStore.Op op : MeteredStore.Op.values()) {
            byOp.put(op.name().toLowerCase(java.util.Locale.ROOT), m.requests(op));
        }
        if (now.peers() != null) {
            ObjectNode peer = tiers.putObject("peer");
            peer.put("bytes", now.peers().peerBytes()).put("requests", now.peers().peerRequests())
                    .put("failovers", now.peers().failovers()).put("resumes", now.peers().resumes());
            HintedStore.HintStats hints = node.hinted().stats();
            peer.put("hinted_bytes", hints.bytes()).put("hinted_reads", hints.reads()).put("hint_misses", hints.misses());
            ArrayNode members = peer.putArray("members");
            for (GroupStore.MemberState ms : now.peers().members()) {
                members.addObject().put("url", ms.url()).put("bytes_served_to_us", ms.bytesServed());
            }
            // who is in the group, from where, and how each member looks from here
            ObjectNode group = root.putObject("group");
            group.put("source", node.groupSource()).put("self", node.group().self());
            ArrayNode list = group.putArray("members");
            for (GroupStore.MemberState ms : now.peers().members()) {
                list.addObject().put("url", ms.url()).put("state", ms.up() ? "up" : "down").put("since", ms.since().toString())
                        .put("self", ms.self());
            }
            group.put("changes", now.peers().changes());
        }
        if (now.shared() != null) {
            tiers.putObject("shared").put("hits", now.shared().hits()).put("bytes", now.shared().bytesFromTier())
                    .put("fills", now.shared().fills()).put("bytes_filled", now.shared().bytesFilled()).put("damaged", now.shared().damaged());
        }
        ServeStats.Snapshot s = node.stats().snapshot();
        root.putObject("serve").put("requests", s.requests()).put("client_errors", s.clientErrors()).put("server_errors", s.serverErrors())
                .put("zero_copy_bytes", s.zeroCopyBytes()).put("streamed_bytes", s.streamedBytes()).put("cut_streams", s.cutStreams())
                .put("connections", s.connections()).put("latency_ms_p50", round(s.latencyP50Millis(), 3))
                .put("latency_ms_p99", round(s.latencyP99Millis(), 3));
        if (node.writeBack() != null) {
            WriteBackStats w = node.writeBack().stats();
            root.putObject("write_back").put("pending_bytes", w.pendingBytes()).put("pending_objects", w.pendingObjects())
                    .put("oldest_pending_s", round(w.oldestPendingSeconds(), 1)).put("uploaded_bytes", w.uploadedBytes())
                    .put("upload_bytes_per_s", round(w.uploadBytesPerSecond(), 0)).put("write_throughs", w.writeThroughs())
                    .put("failed", w.failed()).put("first_failure", w.firstFailure());
        }
        if (node.scratch() != null) {
            Scratch.Stats sc = node.scratch().stats();
            root.putObject("scratch").put("bucket", sc.bucket()).put("quota_bytes", sc.quotaBytes()).put("used_bytes", sc.usedBytes())
                    .put("objects", sc.objects()).put("ttl_s", sc.ttl().toSeconds()).put("refused_writes", sc.refusedWrites())
                    .put("expired", sc.expired());
        }
        ArrayNode jobs = root.putArray("jobs");
        org.HdrHistogram.Histogram allWaits = new org.HdrHistogram.Histogram(3_600_000_000L, 2);
        long totalSamples = 0;
        long totalSteps = 0;
        long totalWaitMicros = 0;
        long totalPredicted = 0;
        double totalRate = 0;
        ObjectNode latest = null;
        String latestJob = null;
        long latestAt = Long.MIN_VALUE;
        for (RunningJob run : this.jobs.jobs().values()) {
            ObjectNode j = jobs.addObject();
            Job.Epoch cur = run.current();
            j.put("job", run.job.name).put("epoch", cur.number).put("position", cur.position)
                    .put("samples_per_epoch", run.job.samplesPerEpoch()).put("planned_blocks", run.plannedBlocks())
                    .put("block_position", run.blockPosition());
            planFields(j, run.job, cur.number);
            j.put("predicted_egress_bytes", run.advice.predictedEgress(cur.number));
            j.put("ms_per_block", round(node.nanosPerBlock(run.job.name) / 1e6, 3));
            Prefetcher.Stats pf = run.prefetchStats();
            if (pf != null) {
                j.putObject("prefetch").put("started_blocks", pf.started()).put("bytes", pf.bytes()).put("refused_blocks", pf.refused())
                        .put("late_blocks", pf.late()).put("failed_blocks", pf.failed()).put("pace_blocks_per_s", round(pf.pace(), 1))
                        .put("fetch_ms", round(pf.fetchSeconds() * 1e3, 1)).put("horizon_ms", round(pf.horizonSeconds() * 1e3, 1));
            }
            run.advice.findings().forEach(j.putArray("advice")::add);
            ArrayNode epochs = j.putArray("epochs");
            List<Job.Epoch> list;
            synchronized (run.job.epochs) {
                list = new ArrayList<>(run.job.epochs);
            }
            for (Job.Epoch e : list) {
                ObjectNode en = epochs.addObject();
                synchronized (run) {
                    fourNumbers(en, e, e.atEnd != null ? e.atEnd : now);
                }
                if (run.job.plan() != null) {
                    en.put("global_batch_shard_mix", round(run.job.shardMix(e.number), 4));
                }
                en.put("predicted_egress_bytes", run.advice.predictedEgress(e.number));
                if (e == cur) {
                    synchronized (run) {
                        allWaits.add(e.waits);
                        totalSamples += e.samples;
                        totalSteps += e.steps;
                        totalWaitMicros += e.waitTotalMicros;
                    }
                    totalRate += en.get("samples_per_s").asDouble();
                    totalPredicted += Math.max(0, run.advice.predictedEgress(e.number));
                }
                if (e == cur && e.lastReportNanos > latestAt && e.steps > 0) {
                    latest = en;
                    latestJob = run.job.name;
                    latestAt = e.lastReportNanos;
                }
            }
        }
        ObjectNode four = root.putObject("four_numbers");
        if (latest != null) {
            four.put("job", latestJob);
            for (String f : List.of("epoch", "samples_per_s", "wait_per_step_ms_p50", "wait_per_step_ms_p99")) {
                four.set(f, latest.get(f));
            }
        }
        four.put("local_hit_rate", round(c.hitRate(), 4)).put("local_hit_rate_bytes", round(c.byteHitRate(), 4))
                .put("peer_bytes", now.peerBytes()).put("shared_tier_bytes", now.sharedBytes()).put("egress_bytes", m.egressBytes())
                .put("egress_cost_usd", round(m.estimatedCostUsd(), 6));
        // every job's current epoch together: the consumers' numbers add up; the tiers' are the daemon's
        root.putObject("jobs_total").put("jobs", this.jobs.jobs().size()).put("eviction_follows", node.config().evictionFollows())
                .put("samples", totalSamples).put("steps", totalSteps).put("samples_per_s", round(totalRate, 1))
                .put("wait_per_step_ms_p50", totalSteps == 0 ? 0 : round(allWaits.getValueAtPercentile(50) / 1000.0, 3))
                .put("wait_per_step_ms_p99", totalSteps == 0 ? 0 : round(allWaits.getValueAtPercentile(99) / 1000.0, 3))
                .put("wait_total_s", round(totalWaitMicros / 1e6, 3)).put("predicted_egress_bytes", totalPredicted)
                .put("local_hit_rate", round(c.hitRate(), 4)).put("local_hit_rate_bytes", round(c.byteHitRate(), 4))
                .put("peer_bytes", now.peerBytes()).put("shared_tier_bytes", now.sharedBytes()).put("egress_bytes", m.egressBytes())
                .put("egress_cost_usd", round(m.estimatedCostUsd(), 6));
        ArrayNode hist = root.putArray("history");
        for (History.Point p : this.jobs.history().points()) {
            ObjectNode h = hist.addObject();
            h.put("t", round(p.t(), 1)).put("samples_per_s", round(p.samplesPerSecond(), 1)).put("wait_ms_p50", round(p.waitP50Millis(), 3))
                    .put("wait_ms_p99", round(p.waitP99Millis(), 3)).put("egress_bytes_per_s", round(p.egressBytesPerSecond(), 0))
                    .put("egress_bytes", p.egressBytes()).put("egress_cost_usd", round(p.egressCostUsd(), 6));
            if (Double.isNaN(p.hitRate())) {
                h.putNull("hit_rate");
            } else {
                h.put("hit_rate", round(p.hitRate(), 4));
            }
        }
        return root;
    }

    /** One epoch's four numbers: the consumers' reports, and the daemon's counters from its start to {@code end}. */
    private static void fourNumbers(ObjectNode out, Job.Epoch e, Counters end) {
        EpochReport r = JobAdvice.report(e, end, -1, 1); // the same figures the advisor reads
        out.put("epoch", r.epoch()).put("samples", r.samples()).put("steps", e.steps)
                .put("samples_per_s", round(r.samplesPerSecond(), 1))
                .put("wait_per_step_ms_p50", round(r.waitPerStepMillisP50(), 3))
                .put("wait_per_step_ms_p99", round(r.waitPerStepMillisP99(), 3))
                .put("wait_total_s", round(r.waitTotalSeconds(), 3))
                .put("local_hit_rate", round(r.localHitRate(), 4))
                .put("local_hit_rate_bytes", round(r.localHitRateBytes(), 4))
                .put("peer_bytes", end.peerBytes() - e.atStart.peerBytes())
                .put("shared_tier_bytes", end.sharedBytes() - e.atStart.sharedBytes())
                .put("egress_bytes", r.egressBytes())
                .put("egress_requests", r.egressRequests())
                .put("egress_cost_usd", round(r.egressCostUsd(), 6));
    }

    private static double round(double v, int digits) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return 0;
        }
        double f = Math.pow(10, digits);
        return Math.round(v * f) / f;
    }
}
