package dev.ferry.serve.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ferry.cache.BlockId;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.TierContents;
import dev.ferry.cache.TierLedger;
import dev.ferry.plan.ManifestJson;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.node.RegionalGroup;
import dev.ferry.serve.protocol.Keys;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.store.ObjectKey;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the node's local tier holds, and loading into it ahead of a job (docs/daemon.md, "The local tier's contents"):
 * <ul>
 *   <li>{@code GET /_ferry/v1/cache[?bucket=B&prefix=P]}: one level of what is resident (buckets, or the folders and
 *       objects under a prefix), with objects, blocks, bytes and seconds since last use;
 *   <li>{@code DELETE /_ferry/v1/cache?bucket=B[&prefix=P]}: drops what is resident there (the object store keeps
 *       everything; a later read fetches it again);
 *   <li>{@code POST /_ferry/v1/warm} with {@code {"bucket": B, "prefix": P}} or {@code {"manifest_key": "B/K"}}:
 *       starts loading those objects ({@link Warming}), answers 202 with its id; with {@code "owned": true}, only
 *       those this daemon owns in its group ({@code ferry warm --group} asks every member so);
 *   <li>{@code POST /_ferry/v1/warm} with {@code {"job": J, "epoch": N}}: the blocks a registered job reads on this
 *       node in that epoch (its current one when not given), in the order it reads them;
 *   <li>{@code GET /_ferry/v1/warm/{id}}: its progress.
 * </ul>
 * Thread-safe.
 */
final class TierApi {
    static final String CACHE = "/_ferry/v1/cache";
    static final String WARM = "/_ferry/v1/warm";
    static final Pattern WARM_ONE = Pattern.compile("/_ferry/v1/warm/(w[0-9]+)");

    private final Node node;
    private final JobRegistry jobs;
    private final Map<String, Warming> warmings = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    TierApi(Node node, JobRegistry jobs) {
        this.node = node;
        this.jobs = jobs;
    }

    private CachingStore tier() throws S3Error {
        CachingStore tier = node.stack().cache();
        if (tier == null || tier.isPassThrough()) {
            throw new S3Error(409, "NoLocalTier", "this daemon keeps no local tier (--cache-size 0, or its folder cannot be used)");
        }
        return tier;
    }

    Reply cache(HttpMethod method, Map<String, List<String>> query) throws S3Error {
        CachingStore tier = tier();
        TierContents contents = tier.contents();
        String bucket = ApiJson.text(query, "bucket");
        String prefix = ApiJson.text(query, "prefix");
        if (bucket != null) {
            Keys.bucket(bucket);
        }
        if (method.equals(HttpMethod.DELETE)) {
            if (bucket == null) {
                throw S3Error.badRequest("InvalidArgument", "dropping from the tier needs a bucket (and a prefix, or the whole bucket goes)");
            }
            TierContents.Dropped d = contents.drop(bucket, prefix == null ? "" : prefix);
            ObjectNode out = ApiJson.JSON.createObjectNode().put("bucket", bucket).put("prefix", prefix == null ? "" : prefix)
                    .put("dropped_blocks", d.blocks()).put("dropped_bytes", d.bytes());
            return Reply.json(HttpResponseStatus.OK, out.toString());
        }
        if (prefix != null && bucket == null) {
            throw S3Error.badRequest("InvalidArgument", "a prefix needs its bucket");
        }
        long now = tier.clock().nanoTime(); // the clock the tier timed its reads with
        ObjectNode out = ApiJson.JSON.createObjectNode().put("capacity_bytes", contents.capacity())
                .put("resident_bytes", tier.stats().residentBytes());
        ArrayNode entries = out.putArray("entries");
        for (TierContents.Holding h : contents.list(bucket, prefix)) {
            ObjectNode e = entries.addObject().put("bucket", h.bucket()).put("prefix", h.prefix()).put("objects", h.objects())
                    .put("blocks", h.blocks()).put("bytes", h.bytes());
            if (h.lastUseNanos() == TierLedger.BEFORE_START) {
                e.putNull("idle_s"); // found on disk at start and not used since
            } else {
                e.put("idle_s", Math.round((now - h.lastUseNanos()) / 1e8) / 10.0);
            }
        }
        return Reply.json(HttpResponseStatus.OK, out.toString());
    }

    Reply startWarm(byte[] body) throws S3Error, IOException {
        CachingStore tier = tier();
        JsonNode req = ApiJson.parse(body);
        Predicate<ObjectKey> mine = mine(req);
        String id = "w" + ids.incrementAndGet();
        String source;
        String unit = "objects";
        Consumer<Warming> work;
        if (req.has("manifest_key")) {
            ObjectKey key = RegistrationRequest.objectKey(req.get("manifest_key").asText(""), "manifest_key");
            if (node.stack().top().head(key).size() > JobLimits.MAX_MANIFEST_BYTES) {
                throw S3Error.badRequest("InvalidArgument", "manifest_key " + key + " is over " + JobLimits.MAX_MANIFEST_BYTES + " bytes");
            }
            var manifest = readManifest(key);
            source = "manifest " + key;
            work = w -> w.manifest(tier, manifest);
        } else if (req.has("bucket")) {
            String bucket = Keys.bucket(req.get("bucket").asText(""));
            String prefix = req.path("prefix").asText("");
            source = "s3://" + bucket + "/" + prefix;
            work = w -> w.prefix(node.stack().top(), tier, bucket, prefix);
        } else if (req.has("job")) {
            String name = req.get("job").asText("");
            RunningJob run = jobs.jobs().get(name);
            if (run == null) {
                throw new S3Error(404, "NoSuchJob", "no job " + name + " is registered with this daemon: register it first (its ranks do)");
            }
            JsonNode asked = req.path("epoch");
            if (!asked.isMissingNode() && (!asked.canConvertToInt() || asked.asInt() < 1)) {
                throw S3Error.badRequest("InvalidArgument", "epoch must be a whole number of at least 1, not " + asked);
            }
            int epoch = asked.isMissingNode() ? run.current().number : asked.asInt();
            List<BlockId> blocks = run.job.nodeFuture(epoch, tier.config().blockSize()).blocks();
            source = "job " + name + " epoch " + epoch;
            unit = "blocks";
            work = w -> w.blocks(tier, blocks);
        } else {
            throw S3Error.badRequest("InvalidArgument",
                    "warm needs {\"bucket\": B, \"prefix\": P}, {\"manifest_key\": \"B/K\"} or {\"job\": J, \"epoch\": N}");
        }
        Warming w = new Warming(id, source, unit, tier.clock(), node.stack().meter(), mine);
        Thread.ofVirtual().name("ferry-warm-" + id).start(() -> work.accept(w));
        warmings.put(id, w);
        return Reply.json(HttpResponseStatus.ACCEPTED, progress(w).toString());
    }

    /** The objects a warm loads: all of them, or with {@code "owned": true} those this daemon owns in its group. */
    private Predicate<ObjectKey> mine(JsonNode req) throws S3Error {
        JsonNode owned = req.path("owned");
        if (!owned.isMissingNode() && !owned.isBoolean()) {
            throw S3Error.badRequest("InvalidArgument", "owned must be true or false, not " + owned);
        }
        if (!owned.asBoolean(false)) {
            return key -> true;
        }
        RegionalGroup group = node.group();
        if (group == null || group.self() == null) {
            throw new S3Error(409, "NotAGroupMember", "this daemon is not a member of a group (--group, --self): it owns no share to warm; "
                    + "warm without owned");
        }
        return group::owns;
    }

    private dev.ferry.plan.Manifest readManifest(ObjectKey key) throws S3Error, IOException {
        try {
            return ManifestJson.read(node.stack().top().readBytes(key, null), key.toString());
        } catch (ManifestJson.BadManifestException e) {
            throw S3Error.badRequest("InvalidArgument", e.getMessage());
        }
    }

    Reply warm(String id) throws S3Error {
        Warming w = warmings.get(id);
        if (w == null) {
            throw new S3Error(404, "NoSuchWarm", "no warm " + id + " on this daemon (they are kept until it stops)");
        }
        return Reply.json(HttpResponseStatus.OK, progress(w).toString());
    }

    private ObjectNode progress(Warming w) {
        Warming.Progress p = w.progress(node.stack().meter());
        ObjectNode out = ApiJson.JSON.createObjectNode().put("id", p.id()).put("source", p.source()).put("unit", p.unit())
                .put("state", p.error() != null ? (p.done() ? "failed" : "failing") : p.done() ? "done" : p.listed() ? "warming" : "listing")
                .put("objects_total", p.objectsTotal()).put("bytes_total", p.bytesTotal()).put("objects_done", p.objectsDone())
                .put("bytes_done", p.bytesDone()).put("bytes_fetched", p.bytesFetched()).put("objects_not_fitting", p.objectsSkipped())
                .put("bytes_not_fitting", p.bytesSkipped())
                .put("objects_elsewhere", p.objectsElsewhere()).put("bytes_elsewhere", p.bytesElsewhere()).put("seconds", Math.round(p.seconds() * 1000) / 1000.0)
                .put("egress_bytes", p.egressBytes()).put("egress_cost_usd", p.egressBytes() * node.stack().egressCostPerByte());
        out.put("error", p.error());
        return out;
    }

    /** True for the paths this API answers. */
    static boolean owns(String path) {
        return path.equals(CACHE) || path.equals(WARM) || WARM_ONE.matcher(path).matches();
    }

    Reply route(HttpMethod method, String path, Map<String, List<String>> query, byte[] body) throws S3Error, IOException {
        if (path.equals(CACHE) && (method.equals(HttpMethod.GET) || method.equals(HttpMethod.DELETE))) {
            return cache(method, query);
        }
        if (path.equals(WARM) && method.equals(HttpMethod.POST)) {
            return startWarm(body);
        }
        Matcher one = WARM_ONE.matcher(path);
        if (one.matches() && method.equals(HttpMethod.GET)) {
            return warm(one.group(1));
        }
        throw new S3Error(405, "MethodNotAllowed", method + " is not allowed on " + path + ": it answers "
                + (path.equals(CACHE) ? "GET and DELETE" : path.equals(WARM) ? "POST" : "GET"));
    }
}
