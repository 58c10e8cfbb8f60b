package dev.ferry.serve.jobs;

import static dev.ferry.serve.jobs.ApiJson.round;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ferry.cache.CacheStats;
import dev.ferry.metrics.EpochReport;
import dev.ferry.metrics.ReadSources;
import dev.ferry.plan.Prefetcher;
import dev.ferry.serve.node.Counters;
import dev.ferry.serve.node.HintedStore;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.node.RegionalGroup;
import dev.ferry.serve.node.NodeStack;
import dev.ferry.serve.node.PeerLevel;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.store.Prices;
import dev.ferry.store.StoreException;
import dev.ferry.store.chain.MeterSnapshot;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.store.shared.GroupStore;
import dev.ferry.writeback.Scratch;
import dev.ferry.writeback.WriteBackStats;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

/**
 * The daemon's status: {@code GET /_ferry/v1/status} (JSON: the daemon, each tier's counters, the group, the front,
 * write-back and scratch, every job with its epochs' four numbers, their totals, and the last minutes' history) and
 * the status page ({@code GET /_ferry/}) that charts it. Thread-safe.
 */
final class StatusApi {
    static final String PATH = "/_ferry/v1/status";

    private final Node node;
    private final JobRegistry jobs;
    private final Supplier<ServeSnapshot> served;
    private final Supplier<URI> endpoint;
    private final byte[] page;
    /** Who holds copies of this node's writes, or null. */
    private final PeerLevel peers;
    private final DecodedApi decoded;

    /**
     * {@code served}: what the front has served; {@code endpoint}: where it listens (known once it is bound);
     * {@code peers}: who holds copies of this node's writes (null: none); {@code decoded}: the decoded samples.
     */
    StatusApi(Node node, JobRegistry jobs, Supplier<ServeSnapshot> served, Supplier<URI> endpoint, PeerLevel peers, DecodedApi decoded) {
        this.peers = peers;
        this.decoded = decoded;
        this.node = node;
        this.jobs = jobs;
        this.served = served;
        this.endpoint = endpoint;
        try (InputStream in = StatusApi.class.getResourceAsStream("status.html")) {
            this.page = in.readAllBytes();
        } catch (IOException | NullPointerException e) {
            throw new IllegalStateException("the status page is missing from the daemon's resources", e);
        }
    }

    /** The path {@code /_ferry} or {@code /_ferry/}: the status page. */
    static boolean isPage(String path) {
        return path.equals("/_ferry") || path.equals("/_ferry/");
    }

    /** The status page: one HTML file that asks for the status every second and charts it. */
    Reply page() {
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("Content-Type", "text/html; charset=utf-8");
        return new Reply.Full(HttpResponseStatus.OK, h, page, false);
    }

    /** The status as JSON. */
    Reply status() {
        return Reply.json(HttpResponseStatus.OK, report().toString());
    }

    private ObjectNode report() {
        Counters now = node.counters();
        ObjectNode root = ApiJson.JSON.createObjectNode();
        root.putObject("daemon").put("endpoint", endpoint.get().toString()).put("upstream", node.stack().origin().description())
                .put("uptime_s", round(node.uptimeSeconds(), 1)).put("block_size", node.config().blockSize());
        tiers(root, now);
        serving(root);
        registeredJobs(root, now);
        history(root.putArray("history"));
        return root;
    }

    /** Each tier's counters (local, origin, peers, shared) and, in a group, its members as seen from here. */
    private void tiers(ObjectNode root, Counters now) {
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
            byOp.put(op.name().toLowerCase(Locale.ROOT), m.requests(op));
        }
        ObjectNode governor = origin.putObject("governor"); // per prefix: the pace it keeps to stay under the store's limit
        node.stack().governor().state().forEach((prefix, st) -> governor.putObject(prefix).put("rate_per_s", round(st.rate(), 1))
                .put("concurrency_limit", round(st.concurrencyLimit(), 1)).put("throttles", st.throttles()));
        if (now.peers() != null) {
            ObjectNode peer = tiers.putObject("peer");
            peer.put("bytes", now.peers().peerBytes()).put("requests", now.peers().peerRequests())
                    .put("failovers", now.peers().failovers()).put("resumes", now.peers().resumes());
            HintedStore.HintStats hints = now.hints();
            peer.put("hinted_bytes", hints.bytes()).put("hinted_reads", hints.reads()).put("hint_misses", hints.misses());
            ArrayNode members = peer.putArray("members");
            for (GroupStore.MemberState ms : now.peers().members()) {
                members.addObject().put("url", ms.url()).put("bytes_served_to_us", ms.bytesServed());
            }
            // who is in the group, from where, and how each member looks from here
            ObjectNode group = root.putObject("group");
            RegionalGroup regional = node.group();
            group.put("source", regional.source()).put("self", regional.self());
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
    }

    /** The front's requests and latency, write-back's uploads, the scratch bucket. */
    private void serving(ObjectNode root) {
        ServeSnapshot s = served.get();
        root.putObject("serve").put("requests", s.requests()).put("client_errors", s.clientErrors()).put("server_errors", s.serverErrors())
                .put("zero_copy_bytes", s.zeroCopyBytes()).put("streamed_bytes", s.streamedBytes()).put("cut_streams", s.cutStreams())
                .put("connections", s.connections()).put("latency_ms_p50", round(s.latencyP50Millis(), 3))
                .put("latency_ms_p99", round(s.latencyP99Millis(), 3));
        NodeStack tiers = node.stack();
        if (tiers.writeBack() != null) {
            WriteBackStats w = tiers.writeBack().stats();
            ObjectNode writeBack = root.putObject("write_back");
            writeBack.put("pending_bytes", w.pendingBytes()).put("pending_objects", w.pendingObjects())
                    .put("oldest_pending_s", round(w.oldestPendingSeconds(), 1)).put("uploaded_bytes", w.uploadedBytes())
                    .put("upload_bytes_per_s", round(w.uploadBytesPerSecond(), 0)).put("write_throughs", w.writeThroughs())
                    .put("failed", w.failed()).put("first_failure", w.firstFailure()).put("retrying", w.retrying())
                    .put("first_retrying", w.firstRetrying()).put("settling", w.settling()).put("late_attempts_repaired", w.repaired())
                    .put("quota_bytes", tiers.writeBack().quota());
            try { // the copies of group members' writes kept here (x-ferry-durability: peer)
                long[] copies = tiers.writeBack().copiesHeld();
                writeBack.put("peer_copies", copies[0]).put("peer_copy_bytes", copies[1])
                        .put("on_peers", peers == null ? 0 : peers.onPeers()); // this node's writes a member holds a copy of
            } catch (IOException e) {
                writeBack.put("peer_copies_error", e.getMessage());
            }
        }
        if (tiers.scratch() != null) {
            Scratch.Stats sc = tiers.scratch().stats();
            root.putObject("scratch").put("bucket", sc.bucket()).put("quota_bytes", sc.quotaBytes()).put("used_bytes", sc.usedBytes())
                    .put("objects", sc.objects()).put("ttl_s", sc.ttl().toSeconds()).put("refused_writes", sc.refusedWrites())
                    .put("expired", sc.expired());
        }
        decoded.status(root.putObject("decoded"));
    }

    /**
     * Every registered job: its position, plan, prefetch, advice and each epoch's four numbers; the four numbers
     * of the job that reported last; and every job's current epoch together.
     */
    private void registeredJobs(ObjectNode root, Counters now) {
        CacheStats c = now.cache();
        MeterSnapshot m = now.meter();
        ArrayNode list = root.putArray("jobs");
        Histogram allWaits = new Histogram(3_600_000_000L, 2);
        long totalSamples = 0;
        long totalSteps = 0;
        long totalWaitMicros = 0;
        long totalPredicted = 0;
        double totalRate = 0;
        long jobsEgress = 0;
        long jobsRequests = 0;
        double jobsCost = 0;
        ObjectNode latest = null;
        String latestJob = null;
        long latestAt = Long.MIN_VALUE;
        for (RunningJob run : jobs.jobs().values()) {
            ObjectNode j = list.addObject();
            EpochRecord cur = run.current();
            j.put("job", run.job.name).put("epoch", cur.number).put("position", cur.position)
                    .put("samples_per_epoch", run.job.samplesPerEpoch()).put("planned_blocks", run.plannedBlocks())
                    .put("block_position", run.blockPosition());
            JobsApi.planFields(j, run.job, cur.number);
            j.put("predicted_egress_bytes", run.advice.predictedEgress(cur.number));
            j.put("ms_per_block", round(node.plans().nanosPerBlock(run.job.name) / 1e6, 3));
            Prefetcher.Stats pf = run.prefetchStats();
            if (pf != null) {
                j.putObject("prefetch").put("started_blocks", pf.started()).put("bytes", pf.bytes()).put("refused_blocks", pf.refused())
                        .put("late_blocks", pf.late()).put("failed_blocks", pf.failed()).put("pace_blocks_per_s", round(pf.pace(), 1))
                        .put("fetch_ms", round(pf.fetchSeconds() * 1e3, 1)).put("horizon_ms", round(pf.horizonSeconds() * 1e3, 1));
            }
            run.advice.findings().forEach(j.putArray("advice")::add);
            ArrayNode epochs = j.putArray("epochs");
            List<EpochRecord> epochList;
            synchronized (run.job.epochs) {
                epochList = new ArrayList<>(run.job.epochs);
            }
            for (EpochRecord e : epochList) {
                ObjectNode en = epochs.addObject();
                synchronized (run) {
                    fourNumbers(en, e, e.atEnd != null ? e.atEnd : now, node.stack().prices());
                }
                jobsEgress += en.get("egress_bytes").asLong();
                jobsRequests += en.get("egress_requests").asLong();
                jobsCost += en.get("egress_cost_usd").asDouble();
                if (run.job.plan() != null) {
                    en.put("global_batch_shard_mix", round(run.job.shardMix(e.number), 4));
                }
                en.put("predicted_egress_bytes", run.advice.predictedEgress(e.number));
                en.put("decoded_samples", e.decodedSamples.sum()).put("decode_s_saved", round(e.decodeSecondsSaved.sum(), 3));
                if (e == cur) {
                    en.put("decoded_bytes_held", decoded.heldBytes());
                }
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
        // the four numbers of the job that reported last, its current epoch's row as it is; with no job, the tier's
        ObjectNode four = root.putObject("four_numbers");
        if (latest != null) {
            four.put("job", latestJob);
            for (String f : List.of("epoch", "samples_per_s", "wait_per_step_ms_p50", "wait_per_step_ms_p99", "wait_share",
                    "local_hit_rate", "local_hit_rate_bytes", "prefetched_share_bytes", "waited_share_bytes", "peer_bytes",
                    "shared_tier_bytes", "egress_bytes", "egress_cost_usd")) {
                four.set(f, latest.get(f));
            }
        } else {
            four.put("local_hit_rate", round(c.hitRate(), 4)).put("local_hit_rate_bytes", round(c.byteHitRate(), 4))
                    .put("peer_bytes", now.peerBytes()).put("shared_tier_bytes", now.sharedBytes()).put("egress_bytes", m.egressBytes())
                    .put("egress_cost_usd", round(m.estimatedCostUsd(), 6));
        }
        // every job's current epoch together: the consumers' numbers add up; the tiers' are the daemon's
        root.putObject("jobs_total").put("jobs", jobs.jobs().size()).put("eviction_follows", node.config().evictionFollows())
                .put("samples", totalSamples).put("steps", totalSteps).put("samples_per_s", round(totalRate, 1))
                .put("wait_per_step_ms_p50", totalSteps == 0 ? 0 : round(allWaits.getValueAtPercentile(50) / 1000.0, 3))
                .put("wait_per_step_ms_p99", totalSteps == 0 ? 0 : round(allWaits.getValueAtPercentile(99) / 1000.0, 3))
                .put("wait_total_s", round(totalWaitMicros / 1e6, 3)).put("predicted_egress_bytes", totalPredicted)
                .put("local_hit_rate", round(c.hitRate(), 4)).put("local_hit_rate_bytes", round(c.byteHitRate(), 4))
                .put("peer_bytes", now.peerBytes()).put("shared_tier_bytes", now.sharedBytes()).put("egress_bytes", m.egressBytes())
                .put("egress_cost_usd", round(m.estimatedCostUsd(), 6))
                // every epoch of every job against the daemon's own count since it started: the jobs' rows add up to
                // jobs_egress_bytes; what no plan asked for (listings, metadata, manifests, unplanned reads) is the rest
                .put("jobs_egress_bytes", jobsEgress).put("jobs_egress_requests", jobsRequests).put("jobs_egress_cost_usd", round(jobsCost, 6))
                .put("other_egress_bytes", Math.max(0, m.egressBytes() - jobsEgress));
    }

    /** The last minutes, a point a second: what the page charts. */
    private void history(ArrayNode hist) {
        for (History.Point p : jobs.history().points()) {
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
    }

    /** One epoch's four numbers: the consumers' reports, and the daemon's counters from its start to {@code end}. */
    private static void fourNumbers(ObjectNode out, EpochRecord e, Counters end, Prices prices) {
        EpochReport r = JobAdvice.report(e, end, -1, 1, prices); // the same figures the advisor reads
        out.put("epoch", r.epoch()).put("samples", r.samples()).put("steps", e.steps)
                .put("samples_per_s", round(r.samplesPerSecond(), 1))
                .put("wait_per_step_ms_p50", round(r.waitPerStepMillisP50(), 3))
                .put("wait_per_step_ms_p99", round(r.waitPerStepMillisP99(), 3))
                .put("wait_total_s", round(r.waitTotalSeconds(), 3))
                .put("wait_share", round(r.waitShare(), 4))
                .put("steady_wait_share", round(r.steadyWaitShare(), 4))
                .put("ranks", e.ranks()).put("ranks_reported", e.ranksReported());
        double consumer = e.consumerSeconds();
        if (Double.isNaN(consumer)) {
            out.putNull("consumer_seconds"); // no rank said its own time: samples/s is by the daemon's clock
        } else {
            out.put("consumer_seconds", round(consumer, 3));
        }
        ReadSources src = r.sources();
        out.put("local_hit_rate", round(r.localHitRate(), 4))
                .put("local_hit_rate_bytes", round(r.localHitRateBytes(), 4))
                .put("prefetched_share_bytes", round(src.prefetchedShareBytes(), 4))
                .put("waited_share_bytes", round(src.waitedShareBytes(), 4))
                .put("read_bytes", src.bytes()).put("resident_bytes", src.residentBytes()).put("prefetched_bytes", src.prefetchedBytes())
                .put("waited_bytes", src.waitedBytes()).put("reads", src.reads()).put("resident_reads", src.residentReads())
                .put("prefetched_reads", src.prefetchedReads()).put("waited_reads", src.waitedReads())
                .put("peer_bytes", end.peerBytes() - e.atStart.peerBytes())
                .put("shared_tier_bytes", end.sharedBytes() - e.atStart.sharedBytes())
                .put("egress_bytes", r.egressBytes())
                .put("egress_ahead_bytes", JobAdvice.originShare(e.fetchedAheadBytes.sum(), e, end))
                .put("fetched_bytes", e.fetchedBytes.sum())
                .put("egress_requests", r.egressRequests())
                .put("egress_cost_usd", round(r.egressCostUsd(), 6));
    }
}
