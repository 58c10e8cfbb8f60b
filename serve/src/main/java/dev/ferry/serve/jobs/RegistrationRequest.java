package dev.ferry.serve.jobs;

import static dev.ferry.serve.jobs.ApiJson.number;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.plan.CanonicalHomes;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.World;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.protocol.Keys;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.regex.Pattern;

/**
 * A job registration ({@code POST /_ferry/v1/jobs}) read into the job it asks for: its name, batch size, and either
 * a manifest (given, or read from {@code manifest_key} through the node) with a world, a plan and maybe a resume, or
 * explicit ranks of keys (looked up, many at a time). Everything a plan will cost is bounded ({@link JobLimits}) from
 * the request alone, before any plan is built. Every field is checked; a wrong one is a 400 that names it.
 *
 * @param resume  where the job resumes from (null: a fresh job)
 * @param replace whether the job replaces a different one registered under its name
 */
record RegistrationRequest(Job job, Job.Resume resume, int batchSize, boolean replace) {
    private static final Pattern JOB_NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");
    private static final int MAX_EXPLICIT_KEYS = 1_000_000;

    /**
     * Reads {@code req} on {@code node} (its block size bounds the plan, its tier sizes the shuffle block, its reads
     * fetch a manifest_key and head explicit keys), checking {@code gone} once the manifest is read.
     */
    static RegistrationRequest read(JsonNode req, Node node, ClientGone gone) throws S3Error, IOException {
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
            job = Job.explicit(name, explicitRanks(req.get("ranks"), node), batch);
        } else {
            Manifest manifest;
            try {
                if (req.has("manifest")) {
                    manifest = ManifestJson.parse(req.get("manifest"), "manifest");
                } else if (req.has("manifest_key")) {
                    ObjectKey key = objectKey(req.get("manifest_key").asText(""), "manifest_key");
                    long size = node.stack().top().head(key).size();
                    if (size > JobLimits.MAX_MANIFEST_BYTES) {
                        throw S3Error.badRequest("InvalidArgument", "manifest_key " + key + " is " + size
                                + " bytes: a manifest may be at most " + JobLimits.MAX_MANIFEST_BYTES + " bytes");
                    }
                    byte[] bytes = node.stack().top().readBytes(key, null);
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
            int jobNode = (int) number(req, "node", 0, 0, world.nodes() - 1);
            // bounded before anything is built or summed (the tier-fitting shuffle block below adds the sizes)
            JobLimits.check(manifest, world, PlanConfig.DEFAULT.uneven(), node.config().blockSize());
            int epochs = (int) number(req, "epochs", 0, 0, 1_000_000);
            resume = resumeNode == null ? null : resumeOf(resumeNode, manifest.totalSamples());
            PlanConfig plan = planOf(req, manifest, world, node.config().cacheSize());
            if (resume != null) {
                plan = withResumedCanonical(plan, resume);
            }
            job = Job.planned(name, manifest, plan, world, jobNode, batch, resume).withPlannedEpochs(epochs);
        }
        JsonNode replace = req.get("replace");
        if (replace != null && !replace.isNull() && !replace.isBoolean()) {
            throw S3Error.badRequest("InvalidArgument", "replace must be true or false, not " + replace);
        }
        return new RegistrationRequest(job, resume, batch, replace != null && replace.asBoolean());
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
        CanonicalHomes homes = homesOf(h, "resume.homes");
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
        CanonicalHomes round = null;
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

    /** CanonicalHomes as JSON gives them: {@code {"nodes": N, "node_of": [node of canonical node 0, ...]}}. */
    private static CanonicalHomes homesOf(JsonNode n, String field) throws S3Error {
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
        return CanonicalHomes.parse(at, nodes);
    }

    static ObjectKey objectKey(String bucketAndKey, String field) throws S3Error {
        int slash = bucketAndKey.indexOf('/');
        if (slash <= 0 || slash == bucketAndKey.length() - 1) {
            throw S3Error.badRequest("InvalidArgument", field + " must be bucket/key, not '" + Uris.abbreviate(bucketAndKey) + "'");
        }
        return ObjectKey.of(Keys.bucket(bucketAndKey.substring(0, slash)), Keys.check(bucketAndKey.substring(slash + 1)));
    }

    /** Each rank's keys, with sizes and ETags looked up (HEAD, many at a time). */
    private static List<List<SampleRange>> explicitRanks(JsonNode ranks, Node node) throws S3Error, IOException {
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
                            return node.stack().top().head(k);
                        } finally {
                            limit.release();
                        }
                    }));
                }
                heads.add(fs);
            }
            List<List<SampleRange>> out = new ArrayList<>();
            int index = 0;
            for (List<Future<ObjectMeta>> rank : heads) {
                List<SampleRange> mine = new ArrayList<>();
                for (Future<ObjectMeta> f : rank) {
                    ObjectMeta m = f.get();
                    mine.add(new SampleRange(index++, m.key(), 0, m.size(), m.etag()));
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
}
