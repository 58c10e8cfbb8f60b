package dev.ferry.serve.jobs;

import static dev.ferry.serve.jobs.ApiJson.number;
import static dev.ferry.serve.jobs.ApiJson.param;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ferry.plan.CanonicalHomes;
import dev.ferry.plan.PlanConfig;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.regex.Pattern;

/**
 * The jobs under {@code /_ferry/v1/jobs}: registering one ({@code POST}, read by {@link RegistrationRequest}), and
 * each job's worker orders ({@code GET .../order}), checkpoints ({@code GET .../checkpoint}) and its consumers'
 * progress reports ({@code POST .../progress}, answered with the advisor's findings). Thread-safe.
 */
final class JobsApi {
    /** Where jobs are registered. */
    static final String JOBS = "/_ferry/v1/jobs";
    /** One job's resources: its name, then order, progress or checkpoint. */
    static final Pattern JOB_PATH = Pattern.compile("/_ferry/v1/jobs/([A-Za-z0-9._-]{1,128})/(order|progress|checkpoint)");

    private final Node node;
    private final JobRegistry jobs;

    JobsApi(Node node, JobRegistry jobs) {
        this.node = node;
        this.jobs = jobs;
    }

    /**
     * Registers a job. The request is read and bounded first ({@link RegistrationRequest}); then the plans and the
     * prediction are built, checking between steps that the client still waits (499 when it went).
     */
    Reply register(byte[] body, ClientGone gone) throws S3Error, IOException {
        try {
            return registered(RegistrationRequest.read(ApiJson.parse(body), node, gone), gone);
        } catch (CancellationException e) {
            throw new S3Error(499, "ClientClosedRequest", e.getMessage()); // answers nobody: the connection is closed
        }
    }

    /** The answer to a registration: the job as registered (new, existing or replacing another), its plan and prediction. */
    private Reply registered(RegistrationRequest asked, ClientGone gone) throws S3Error {
        JobRegistry.Registration registration;
        try {
            registration = jobs.register(asked.job(), asked.replace(), gone);
        } catch (JobRegistry.ConflictException e) {
            throw new S3Error(409, "JobConflict", e.getMessage());
        }
        RunningJob run = registration.run();
        Job job = run.job;
        String name = job.name;
        int batch = asked.batchSize();
        Job.Resume resume = asked.resume();
        ObjectNode out = ApiJson.JSON.createObjectNode();
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
        return Reply.json(HttpResponseStatus.OK, out.toString());
    }

    /** A request on one registered job's {@code resource} (order, checkpoint or progress); {@code path} names it in errors. */
    Reply job(HttpMethod method, String path, String name, String resource, Map<String, List<String>> query, byte[] body) throws S3Error {
        RunningJob run = jobs.jobs().get(name);
        if (run == null) {
            throw new S3Error(404, "NoSuchJob", "no job named '" + name + "' is registered");
        }
        boolean get = method.equals(HttpMethod.GET);
        if (get && resource.equals("order")) {
            return Reply.json(HttpResponseStatus.OK, order(run.job, query).toString());
        }
        if (get && resource.equals("checkpoint")) {
            return Reply.json(HttpResponseStatus.OK, checkpoint(run.job, query).toString());
        }
        if (method.equals(HttpMethod.POST) && resource.equals("progress")) {
            progress(run, ApiJson.parse(body));
            run.advice.refresh(run, node.counters(), node.stack().prices(), node.stack()::governorSummary, jobs.decodedAdvice());
            ObjectNode answer = ApiJson.JSON.createObjectNode().put("ok", true);
            run.advice.findings().forEach(answer.putArray("advice")::add);
            return Reply.json(HttpResponseStatus.OK, answer.toString());
        }
        throw new S3Error(405, "MethodNotAllowed", method + " is not allowed on " + path);
    }

    /** {@code homes} as a registration's {@code resume} takes them back: {@code {"nodes": N, "node_of": [...]}}. */
    static void homesJson(ObjectNode out, CanonicalHomes homes) {
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
        ObjectNode out = ApiJson.JSON.createObjectNode();
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
    static void planFields(ObjectNode out, Job job, int epoch) {
        PlanConfig plan = job.plan();
        if (plan == null) {
            return;
        }
        out.put("partition", plan.partition().label()).put("canonical_nodes", plan.canonical()).put("mix_fraction", plan.mixFraction())
                .put("shuffle_block_shards", plan.shuffleBlockShards())
                .put("global_batch_shard_mix", ApiJson.round(job.shardMix(epoch), 4));
    }

    /**
     * A worker's order. By default as spans ({@link Span}: one entry per run of consecutive samples of one
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
        List<SampleRange> samples;
        try {
            samples = job.order(epoch, rank, worker, workers, start);
        } catch (IllegalArgumentException e) {
            throw S3Error.badRequest("InvalidArgument", e.getMessage());
        }
        ObjectNode out = ApiJson.JSON.createObjectNode();
        out.put("job", job.name).put("epoch", epoch).put("rank", rank).put("worker", worker).put("workers", workers)
                .put("batch_size", job.batchSize()).put("sample_count", samples.size());
        if (form.equals("samples")) {
            ArrayNode list = out.putArray("samples");
            for (SampleRange s : samples) {
                list.addObject().put("index", s.index()).put("bucket", s.key().bucket()).put("key", s.key().key())
                        .put("offset", s.offset()).put("length", s.length()).put("etag", s.etag());
            }
            return out;
        }
        ArrayNode list = out.putArray("spans");
        for (Span span : Span.of(samples)) {
            ObjectNode o = list.addObject().put("bucket", span.key().bucket()).put("key", span.key().key())
                    .put("etag", span.etag()).put("offset", span.offset()).put("length", span.length());
            ArrayNode each = o.putArray("samples");
            for (SampleRange s : span.samples()) {
                each.addArray().add(s.index()).add(s.offset()).add(s.length());
            }
        }
        return out;
    }

    private static void progress(RunningJob run, JsonNode req) throws S3Error {
        int epoch = (int) number(req, "epoch", Long.MIN_VALUE, 1, Integer.MAX_VALUE);
        long position = number(req, "position", Long.MIN_VALUE, 0, Long.MAX_VALUE);
        long samples = number(req, "samples", 0, 0, Long.MAX_VALUE);
        int rank = (int) number(req, "rank", 0, 0, run.job.ranks() - 1);
        double elapsed = Double.NaN;
        JsonNode e = req.path("elapsed_s");
        if (!e.isMissingNode() && !e.isNull()) {
            if (!e.isNumber() || !(e.asDouble() >= 0) || Double.isInfinite(e.asDouble())) {
                throw S3Error.badRequest("InvalidArgument", "elapsed_s must be a non-negative number of seconds (the time the report covers)");
            }
            elapsed = e.asDouble();
        }
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
        run.progress(epoch, position, samples, waits, rank, elapsed);
    }
}
