package dev.ferry.serve.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ferry.cache.CachingStore;
import dev.ferry.decoded.DecodedKey;
import dev.ferry.decoded.DecodedSamples;
import dev.ferry.decoded.DecodedSplit;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decoded samples for loaders that ask (docs/decoded-cache.md, "The daemon's side"):
 * <ul>
 *   <li>{@code POST /_ferry/v1/decoded/lookup} with {@code {"version": V, "samples": [[bucket, key, etag, offset,
 *       length], ...]}}: which of them are held decoded ({@code "held": "0110..."}), and whether to offer more
 *       ({@code "keep"});
 *   <li>{@code GET /_ferry/v1/decoded?bucket&key&etag&offset&length&version&job&epoch&index}: a decoded sample, its
 *       decode's seconds in {@code x-ferry-decode-seconds}; 404 when none is held, it fails its check, or the object is
 *       no longer at that ETag;
 *   <li>{@code PUT} of the same: offers one (201 kept, 200 with {@code "kept": false} refused);
 *   <li>{@code POST /_ferry/v1/decoded/report}: what a loader worker measured, which the split is chosen from
 *       ({@link DecodedSplit}); answers {@code "keep"}.
 * </ul>
 * Entries are node-local: nothing here reaches the object store. Thread-safe.
 */
final class DecodedApi {
    static final String PATH = "/_ferry/v1/decoded";
    static final String LOOKUP = PATH + "/lookup";
    static final String REPORT = PATH + "/report";
    /** A decoded sample's bytes at most. */
    static final int MAX_ENTRY_BYTES = 64 << 20;
    static final String DECODE_SECONDS = "x-ferry-decode-seconds";
    /** Encoded reads measured before their cost is taken as measured. */
    private static final int ENOUGH = 256;

    /** What the loaders of one job measured, summed over their reports. */
    private static final class Measured {
        long decodes;
        double decodeSeconds;
        long decodedReads;
        double decodedReadSeconds;
        long encodedReads;
        double encodedReadSeconds;
        double encodedBytes;
        double decodedBytes;
        long decodedSized;
        double fetchBytes;
        double fetchSeconds;
        int workers = 1;

        /** Adds a worker's report. {@code entryOverhead}: what an entry adds on disk to each decoded sample's bytes. */
        synchronized void add(JsonNode r, long entryOverhead) {
            decodes += r.path("decodes").asLong(0);
            decodeSeconds += r.path("decode_s").asDouble(0);
            decodedReads += r.path("decoded_reads").asLong(0);
            decodedReadSeconds += r.path("decoded_read_s").asDouble(0);
            encodedReads += r.path("encoded_reads").asLong(0);
            encodedReadSeconds += r.path("encoded_read_s").asDouble(0);
            encodedBytes += r.path("encoded_bytes").asDouble(0);
            // as an entry holds it on disk: its key beside it (the loader's samples have keys of about one length)
            decodedBytes += r.path("decoded_bytes").asDouble(0) + r.path("decoded_sized").asLong(0) * entryOverhead;
            decodedSized += r.path("decoded_sized").asLong(0);
            fetchBytes += r.path("fetch_bytes").asDouble(0);
            fetchSeconds += r.path("fetch_s").asDouble(0);
            workers = Math.max(1, r.path("workers").asInt(workers));
        }

        /** Adds another job's sums, its workers counted {@code ranks} times (its ranks on this node). */
        synchronized void addTo(Measured total, int ranks) {
            total.decodes += decodes;
            total.decodeSeconds += decodeSeconds;
            total.decodedReads += decodedReads;
            total.decodedReadSeconds += decodedReadSeconds;
            total.encodedReads += encodedReads;
            total.encodedReadSeconds += encodedReadSeconds;
            total.encodedBytes += encodedBytes;
            total.decodedBytes += decodedBytes;
            total.decodedSized += decodedSized;
            total.fetchBytes += fetchBytes;
            total.fetchSeconds += fetchSeconds;
            total.workers += workers * ranks;
        }
    }

    private final Node node;
    private final JobRegistry jobs;
    private final DecodedSamples samples;
    private final double fixedShare;
    private final Map<String, Measured> measured = new ConcurrentHashMap<>();
    private volatile DecodedSplit.Choice choice;
    /** The CPU this daemon spent on decoded reads (checking, copying): a decoded read's cost beside the loader's. */
    private static final java.lang.management.ThreadMXBean CPU = java.lang.management.ManagementFactory.getThreadMXBean();
    private final java.util.concurrent.atomic.LongAdder servedNanos = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder served = new java.util.concurrent.atomic.LongAdder();
    /** What an entry adds to a decoded sample's bytes on disk, as the last one stored said (a key of 100 bytes until then). */
    private volatile long entryOverhead = DecodedSamples.entryBytes(new DecodedKey("b", "k".repeat(80), "e".repeat(10), 0, 0, "v"), 0);

    DecodedApi(Node node, JobRegistry jobs) {
        this.node = node;
        this.jobs = jobs;
        this.samples = node.decoded();
        this.fixedShare = node.config().decodedShare();
        if (samples != null && !Double.isNaN(fixedShare)) {
            long bytes = (long) (fixedShare * tier().contents().capacity());
            try {
                apply(new DecodedSplit.Choice(fixedShare, bytes, Double.NaN, Double.NaN, Math.round(fixedShare * 100) + "% of the tier decoded, as set"));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("cannot make room for the decoded samples", e);
            }
        } else if (samples != null) {
            choice = new DecodedSplit.Choice(0, 0, Double.NaN, Double.NaN, "off until a loader reports what its decode costs");
        }
    }

    static boolean owns(String path) {
        return path.equals(PATH) || path.equals(LOOKUP) || path.equals(REPORT);
    }

    private CachingStore tier() {
        return node.stack().cache();
    }

    private DecodedSamples samples() throws S3Error {
        if (samples == null) {
            throw new S3Error(409, "NoDecodedSamples", node.config().decodedShare() == 0
                    ? "this daemon keeps no decoded samples (--decoded off)" : "this daemon keeps no decoded samples: it has no local tier");
        }
        return samples;
    }

    Reply route(HttpMethod method, String path, Map<String, List<String>> query, byte[] body) throws S3Error, IOException {
        if (path.equals(LOOKUP) && method.equals(HttpMethod.POST)) {
            return lookup(body);
        }
        if (path.equals(REPORT) && method.equals(HttpMethod.POST)) {
            return report(body);
        }
        if (path.equals(PATH) && method.equals(HttpMethod.GET)) {
            return get(query);
        }
        if (path.equals(PATH) && method.equals(HttpMethod.PUT)) {
            return put(query, body);
        }
        throw new S3Error(405, "MethodNotAllowed", method + " is not allowed on " + path + ": it answers "
                + (path.equals(PATH) ? "GET and PUT" : "POST"));
    }

    private boolean keep() {
        DecodedSplit.Choice c = choice;
        return samples != null && c != null && c.lentBytes() > 0;
    }

    private Reply lookup(byte[] body) throws S3Error {
        DecodedSamples s = samples();
        JsonNode req = ApiJson.parse(body);
        String version = req.path("version").asText("");
        JsonNode list = req.path("samples");
        if (!list.isArray()) {
            throw S3Error.badRequest("InvalidArgument", "lookup needs \"samples\": a list of [bucket, key, etag, offset, length]");
        }
        StringBuilder held = new StringBuilder(list.size());
        for (JsonNode one : list) {
            if (!one.isArray() || one.size() != 5) {
                throw S3Error.badRequest("InvalidArgument", "each sample of a lookup is [bucket, key, etag, offset, length], not " + one);
            }
            // a bad field's IllegalArgumentException is answered 400 InvalidArgument (ControlApi.handle)
            held.append(s.holds(new DecodedKey(one.get(0).asText(), one.get(1).asText(), one.get(2).asText(), one.get(3).asLong(-1),
                    one.get(4).asLong(-1), version)) ? '1' : '0');
        }
        ObjectNode out = ApiJson.JSON.createObjectNode().put("keep", keep()).put("held", held.toString());
        return Reply.json(HttpResponseStatus.OK, out.toString());
    }

    private static DecodedKey key(Map<String, List<String>> q) throws S3Error {
        return new DecodedKey(ApiJson.requiredText(q, "bucket"), ApiJson.requiredText(q, "key"), ApiJson.requiredText(q, "etag"),
                ApiJson.param(q, "offset", Long.MIN_VALUE, 0, Long.MAX_VALUE), ApiJson.param(q, "length", Long.MIN_VALUE, 0, Long.MAX_VALUE),
                ApiJson.requiredText(q, "version"));
    }

    /** The job's run and epoch the query names, or null when it names none that is registered. */
    private RunningJob run(Map<String, List<String>> q) {
        String name = ApiJson.text(q, "job");
        return name == null ? null : jobs.jobs().get(name);
    }

    /** The epoch the query names (the job's current one when it names none). */
    private static int epoch(RunningJob run, Map<String, List<String>> q) throws S3Error {
        return (int) ApiJson.param(q, "epoch", run.current().number, 1, Integer.MAX_VALUE);
    }

    /** When the sample is next read, by the plan of the job the query names; unknown without one. */
    private static long nextUse(RunningJob run, Map<String, List<String>> q) throws S3Error {
        if (run == null) {
            return Long.MAX_VALUE - 1;
        }
        return run.job.nextUse(epoch(run, q), (int) ApiJson.param(q, "index", -1, -1, Integer.MAX_VALUE));
    }

    private Reply get(Map<String, List<String>> q) throws S3Error, IOException {
        long cpu = CPU.getCurrentThreadCpuTime();
        try {
            return read(q);
        } finally {
            long spent = CPU.getCurrentThreadCpuTime() - cpu;
            if (cpu >= 0 && spent >= 0) {
                servedNanos.add(spent);
                served.increment();
            }
        }
    }

    private Reply read(Map<String, List<String>> q) throws S3Error, IOException {
        DecodedSamples s = samples();
        DecodedKey key = key(q);
        RunningJob run = run(q);
        if (s.holds(key) && !current(key)) {
            s.dropStale(key);
        }
        DecodedSamples.Hit hit = s.get(key, nextUse(run, q));
        if (hit == null) {
            throw new S3Error(404, "NoSuchDecodedSample", "no decoded sample of " + key.bucket() + "/" + key.key() + " at "
                    + key.offset() + "+" + key.length() + " for " + key.version() + " is held");
        }
        if (run != null) {
            EpochRecord e = run.epoch(epoch(run, q));
            e.decodedSamples.increment();
            e.decodeSecondsSaved.add(hit.decodeSeconds());
        }
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("Content-Type", "application/octet-stream");
        h.set(DECODE_SECONDS, Double.toString(hit.decodeSeconds()));
        return new Reply.Full(HttpResponseStatus.OK, h, hit.value(), false);
    }

    /** The object is still at the key's ETag, as the tier knows it (its fresh metadata, else a HEAD). */
    private boolean current(DecodedKey key) throws IOException {
        try {
            ObjectMeta meta = node.stack().top().head(new ObjectKey(key.bucket(), key.key()));
            return key.etag().equals(meta.etag());
        } catch (ObjectNotFoundException gone) {
            return false;
        }
    }

    private Reply put(Map<String, List<String>> q, byte[] body) throws S3Error, IOException {
        DecodedSamples s = samples();
        DecodedKey key = key(q);
        String seconds = ApiJson.text(q, "decode_s");
        double decodeSeconds;
        try {
            decodeSeconds = seconds == null ? 0 : Double.parseDouble(seconds);
        } catch (NumberFormatException e) {
            throw S3Error.badRequest("InvalidArgument", "decode_s must be a number of seconds, not '" + seconds + "'");
        }
        ObjectNode out = ApiJson.JSON.createObjectNode();
        if (!keep()) {
            out.put("kept", false).put("reason", choice == null ? "no share of the tier is for decoded samples" : choice.reason());
            return Reply.json(HttpResponseStatus.OK, out.toString());
        }
        if (!current(key)) {
            out.put("kept", false).put("reason", "the object is no longer at ETag " + key.etag());
            return Reply.json(HttpResponseStatus.OK, out.toString());
        }
        entryOverhead = DecodedSamples.entryBytes(key, 0);
        boolean kept = s.put(key, body, decodeSeconds, nextUse(run(q), q));
        out.put("kept", kept);
        if (!kept) {
            out.put("reason", "the decoded samples' share is full of samples read sooner");
        }
        return Reply.json(kept ? HttpResponseStatus.CREATED : HttpResponseStatus.OK, out.toString());
    }

    private Reply report(byte[] body) throws S3Error, IOException {
        // measured even where none are kept (--decoded off, or a loader without decode_version): the advisor says
        // what keeping them would give
        JsonNode r = ApiJson.parse(body);
        String job = r.path("job").asText("");
        measured.computeIfAbsent(job, j -> new Measured()).add(r, entryOverhead);
        if (samples != null && Double.isNaN(fixedShare)) {
            DecodedSplit.Measures measures = measures(null);
            if (measures != null) {
                apply(DecodedSplit.choose(measures, tier().contents().capacity()));
            }
        }
        ObjectNode out = ApiJson.JSON.createObjectNode().put("keep", keep());
        return Reply.json(HttpResponseStatus.OK, out.toString());
    }

    /**
     * What keeping {@code job}'s decoded samples would give, in a sentence, when its loaders measured their decode and
     * none are kept for it now; null otherwise.
     */
    String advice(String job) {
        DecodedSplit.Measures m = measures(job);
        CachingStore tier = tier();
        if (m == null || tier == null || tier.isPassThrough()) {
            return null;
        }
        Measured measured = this.measured.get(job);
        synchronized (measured) {
            if (measured.decodedReads > 0) {
                return null; // its loaders read kept decodes already
            }
        }
        DecodedSplit.Choice c = DecodedSplit.choose(m, tier.contents().capacity());
        if (c.lentBytes() == 0) {
            return null;
        }
        String how = samples == null ? "start the daemon with --decoded auto" : "pass decode_version= to FerryIterableDataset";
        return String.format(java.util.Locale.ROOT,
                "Keeping decoded samples on the tier would give about %.0f samples/s against %.0f now by ferry's model (a decode takes %.1f ms of CPU, "
                        + "a decoded read about %.1f ms) and needs %s of it: %s.",
                c.samplesPerSecond(), c.noneSamplesPerSecond(), m.decodeSeconds() * 1e3, m.decodedReadSeconds() * 1e3,
                dev.ferry.util.Sizes.format(c.lentBytes()), how);
    }

    /**
     * The measures of every reporting job together ({@code job} null), or of one, per sample; null until a decode and
     * its size were measured.
     */
    private DecodedSplit.Measures measures(String only) {
        long n = 0;
        Measured t = new Measured();
        t.workers = 0;
        for (Map.Entry<String, Measured> e : measured.entrySet()) {
            if (only != null && !only.equals(e.getKey())) {
                continue;
            }
            RunningJob run = jobs.jobs().get(e.getKey());
            n += run == null ? 0 : run.job.nodeSamples();
            e.getValue().addTo(t, run == null ? 1 : run.job.ranksOnNode());
        }
        if (t.decodes == 0 || t.decodedSized == 0 || n == 0) {
            return null;
        }
        // a decoded read: the loader's side (a request, and unpacking) as measured, else 2 GB/s and a request; and this
        // daemon's (the entry read, checked and copied), as measured, else 1 GB/s and a request
        double decodedSize = t.decodedBytes / t.decodedSized;
        double loaderRead = t.decodedReads > 0 ? t.decodedReadSeconds / t.decodedReads : 200e-6 + 0.5e-9 * decodedSize;
        long n0 = served.sum();
        double daemonRead = n0 > 0 ? servedNanos.sum() / 1e9 / n0 : 100e-6 + 1e-9 * decodedSize;
        double encodedSize = t.encodedReads > 0 ? t.encodedBytes / t.encodedReads : decodedSize;
        // an encoded read, as measured over enough reads to mean something; else as the loader's side of a decoded
        // read (a request to the same daemon: its cost is the request's more than its bytes')
        double encodedRead = t.encodedReads >= ENOUGH ? t.encodedReadSeconds / t.encodedReads : loaderRead;
        int cores = Math.min(Runtime.getRuntime().availableProcessors(), Math.max(1, t.workers));
        // the rate one worker's reads came at (its bytes over its reads' time on its threads), not the workers' sum: a
        // share lent to decoded samples is room the daemon's plan prefetch no longer has to stage blocks ahead in, and
        // the encoded reads left then wait on the store more than they did when this was measured. (Summed over the
        // workers, a sweep on a small tier had the split keep 95% decoded, 0.64x the best fixed share; so, 1.12x.)
        double rate = t.fetchSeconds > 0 ? t.fetchBytes / t.fetchSeconds : Double.POSITIVE_INFINITY;
        return new DecodedSplit.Measures(n, t.decodeSeconds / t.decodes, loaderRead + daemonRead, encodedRead, decodedSize, encodedSize,
                cores, rate);
    }

    /** Lends the tier's room to the decoded samples, or takes it back, in the order that never holds more than the tier. */
    private synchronized void apply(DecodedSplit.Choice c) throws IOException {
        DecodedSplit.Choice before = choice;
        long was = before == null ? 0 : before.lentBytes();
        if (c.lentBytes() < was) {
            samples.quota(c.lentBytes());
            tier().contents().lend(c.lentBytes());
        } else {
            tier().contents().lend(c.lentBytes());
            samples.quota(c.lentBytes());
        }
        choice = c;
    }

    /** The status's {@code decoded} object. */
    void status(ObjectNode out) {
        if (samples == null) {
            out.put("mode", node.config().decodedShare() == 0 ? "off" : "no local tier");
            return;
        }
        DecodedSamples.Stats st = samples.stats();
        DecodedSplit.Choice c = choice;
        out.put("mode", Double.isNaN(fixedShare) ? "auto" : "fixed").put("share", c.share())
                .put("quota_bytes", st.quotaBytes()).put("held_bytes", st.usedBytes()).put("entries", st.entries())
                .put("hits", st.hits()).put("misses", st.misses()).put("stored", st.stored()).put("refused", st.refused())
                .put("evicted", st.evicted()).put("corrupt", st.corrupt()).put("stale", st.stale()).put("why", c.reason());
        if (!Double.isNaN(c.samplesPerSecond())) {
            out.put("predicted_samples_per_s", ApiJson.round(c.samplesPerSecond(), 1))
                    .put("predicted_without_samples_per_s", ApiJson.round(c.noneSamplesPerSecond(), 1));
        }
    }

    /** The bytes decoded samples hold now (0 with none). */
    long heldBytes() {
        return samples == null ? 0 : samples.stats().usedBytes();
    }
}
