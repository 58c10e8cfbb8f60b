package dev.ferry.serve.jobs;

import dev.ferry.cache.BlockId;
import dev.ferry.metrics.Advisor;
import dev.ferry.metrics.EpochReport;
import dev.ferry.metrics.ReadSources;
import dev.ferry.serve.node.Counters;
import dev.ferry.sim.DaemonReplay;
import dev.ferry.sim.EgressPrediction;
import dev.ferry.store.Prices;
import dev.ferry.store.StoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The advisor for one registered job, as the daemon sees it: each epoch's four numbers (the consumers'
 * reports and the daemon's counters over the epoch) read by the same rules as the Java loader's
 * {@link Advisor}, with what only the daemon measures (reads in flight and the first-byte share of their
 * time, over the last epoch), the partition rules for a job of several nodes, and the egress the job's plan
 * predicts: the node's block reads replayed through the daemon's own policy class and watermarks at the
 * tier's size ({@link DaemonReplay}). Predictions are computed once per job, at registration (and
 * once per capacity the sizing rule asks about); findings are recomputed when asked, from the counters.
 * Thread-safe.
 */
final class JobAdvice {
    /** Epochs predicted at registration; later epochs are taken to repeat the last (a plan's steady state). */
    static final int PREDICTED_EPOCHS = 3;

    private final Job job;
    private final long capacity;
    private final int blockSize;
    /** How many blocks the job's prefetcher fetches at a time. */
    private final int prefetchSlots;
    private volatile long[] predicted;
    private final Map<Long, Long> steadyAtCapacity = new ConcurrentHashMap<>();
    private volatile List<String> findings = List.of();

    /**
     * Predicts a planned job's egress now, checking between epochs that the registering client has not {@code gone};
     * {@code capacity} and {@code blockSize}: the node's local tier, {@code prefetchSlots}: its prefetchers' fetches at a time.
     */
    JobAdvice(Job job, long capacity, int blockSize, int prefetchSlots, ClientGone gone) {
        this(job, capacity, blockSize, prefetchSlots, gone, block -> false);
    }

    /**
     * As {@link #JobAdvice(Job, long, int, int, ClientGone)}, from a tier that holds the blocks {@code resident} accepts
     * now: the first epoch's prediction counts no egress for what is already here.
     */
    JobAdvice(Job job, long capacity, int blockSize, int prefetchSlots, ClientGone gone, Predicate<BlockId> resident) {
        this.job = job;
        this.capacity = capacity;
        this.blockSize = blockSize;
        this.prefetchSlots = prefetchSlots;
        if (job.manifest() != null) {
            predicted = predict(capacity, gone, resident); // bounded by JobLimits
        }
    }

    /**
     * Egress per epoch the plan predicts for this node with a tier of {@code bytes} holding what {@code resident}
     * accepts at the start: epochs 1 to {@link #PREDICTED_EPOCHS}.
     */
    private long[] predict(long bytes, ClientGone gone, Predicate<BlockId> resident) {
        // each epoch's reads are built when the replay reaches it: at most two are held, and a client
        // that has gone is noticed between epochs
        return DaemonReplay.egressByEpoch(job.manifest(), PREDICTED_EPOCHS, e -> {
            gone.check();
            return EgressPrediction.nodeBlocks(job.manifest(), job.plan(), e, job.world(), job.node(), blockSize);
        }, bytes, blockSize, resident);
    }

    /** The predicted egress of {@code epoch} (1-based), or -1 while it is being computed (or for an explicit job). */
    long predictedEgress(int epoch) {
        long[] p = predicted;
        if (p == null || p.length == 0) {
            return -1;
        }
        return p[Math.min(epoch, p.length) - 1];
    }

    /** The last findings computed. */
    List<String> findings() {
        return findings;
    }

    /**
     * Recomputes the findings from the job's epochs as of {@code now}; where preprocessing is CPU-bound, {@code decoded}
     * says in a sentence what keeping the job's decoded samples would give (null: it cannot say).
     */
    List<String> refresh(RunningJob run, Counters now, Prices prices, Supplier<String> governor, Function<String, String> decoded) {
        double egressCostPerByte = prices.egressPerByte();
        List<EpochRecord> epochs;
        synchronized (job.epochs) {
            epochs = new ArrayList<>(job.epochs);
        }
        List<EpochReport> reports = new ArrayList<>();
        List<Advisor.PartitionEpoch> partition = new ArrayList<>();
        EpochRecord last = null;
        Counters lastEnd = null;
        for (EpochRecord e : epochs) {
            if (e.steps == 0) {
                continue; // an epoch nobody has reported a step of yet says nothing
            }
            Counters end;
            synchronized (run) {
                end = e.atEnd != null ? e.atEnd : now;
            }
            EpochReport r = report(e, end, predictedEgress(e.number), job.plan() != null ? job.shardMix(e.number) : 1, prices);
            reports.add(r);
            partition.add(new Advisor.PartitionEpoch(e.number, r.egressBytes(), r.localHitRate(), r.globalBatchShardMix(),
                    r.egressBytes() * egressCostPerByte));
            last = e;
            lastEnd = end;
        }
        if (last == null) {
            findings = List.of();
            return findings;
        }
        long nanos = lastEnd.nanos() - last.atStart.nanos();
        long nodeBytes = job.nodeBytes(last.number);
        Advisor.Context context = new Advisor.Context(nodeBytes, capacity, 0, prefetchSlots,
                Math.max(job.plannedEpochs(), reports.get(reports.size() - 1).epoch()), egressCostPerByte,
                this::steadyEgressAt, lastEnd.meter().readsInFlightSince(last.atStart.meter(), nanos),
                lastEnd.meter().firstByteShareSince(last.atStart.meter()), governor.get());
        List<String> out = new ArrayList<>(Advisor.advise(reports, context));
        if (job.plan() != null) {
            List<String> partitionFindings = Advisor.partition(new Advisor.Cluster(job.plan().partition().label(), job.world().nodes(),
                    job.manifest().totalBytes(), capacity, true), partition);
            if (!partitionFindings.isEmpty()) {
                out.removeIf(f -> f.startsWith(Advisor.NO_PROBLEM));
                out.addAll(partitionFindings);
            }
        }
        for (int i = 0; i < out.size(); i++) {
            if (out.get(i).startsWith(Advisor.CPU_BOUND)) {
                String kept = decoded.apply(job.name);
                if (kept != null) {
                    out.set(i, out.get(i) + " " + kept);
                }
            }
        }
        findings = List.copyOf(out);
        return findings;
    }

    /** The egress of the plan's last predicted epoch with a tier of {@code bytes} (for the sizing rule; cached). */
    private long steadyEgressAt(long bytes) {
        if (job.manifest() == null) {
            return 0;
        }
        return steadyAtCapacity.computeIfAbsent(bytes, b -> {
            long[] p = predict(b, ClientGone.NEVER, block -> false); // the steady state, whatever is resident now
            return p[p.length - 1];
        });
    }

    /**
     * One epoch's four numbers: the consumers' reports; the reads and egress the local tier charged to the epoch
     * ({@link JobLedger}), its cost at {@code prices}; and from the daemon's counters from its start to {@code end},
     * what only they measure (SlowDowns, first-byte latency).
     */
    static EpochReport report(EpochRecord e, Counters end, long predicted, double shardMix, Prices prices) {
        // by the consumers' own clocks where they said them; else the daemon's, from the epoch's start to its last report
        double wall = (e.lastReportNanos - e.startNanos) / 1e9;
        double seconds = Double.isNaN(e.consumerSeconds()) ? wall : e.consumerSeconds();
        double waitShare = e.consumerWaitShare();
        double steadyShare = e.consumerSteadyWaitShare();
        if (Double.isNaN(waitShare)) {
            double time = wall * Math.max(1, e.ranksReported());
            double waited = Math.min(time, e.waitTotalMicros / 1e6);
            waitShare = time <= 0 ? 0 : waited / time;
            steadyShare = EpochReport.steadyShare(waited, time, Math.min(waited, Math.max(1, e.ranksReported()) * e.waits.getMaxValue() / 1e6));
        }
        ReadSources sources = e.reads.sources();
        long egress = originShare(e.fetchedBytes.sum(), e, end);
        long requests = e.fetchRequests.sum();
        return new EpochReport(e.number, e.samples, e.steps, seconds <= 0 ? 0 : e.samples / seconds,
                e.steps == 0 ? 0 : e.waits.getValueAtPercentile(50) / 1000.0, e.steps == 0 ? 0 : e.waits.getValueAtPercentile(99) / 1000.0,
                e.waitTotalMicros / 1e6, sources.residentShareReads(), sources.residentShareBytes(), egress, requests,
                prices.cost(egress, requests, 0), predicted,
                end.meter().failures(StoreException.Kind.THROTTLED) - e.atStart.meter().failures(StoreException.Kind.THROTTLED),
                end.meter().firstByteP50Micros() / 1000.0, shardMix, waitShare, steadyShare, sources);
    }

    /**
     * Of {@code fetched}, the bytes the tier fetched for the epoch, what came from the object store: all of it on a
     * node alone; in a regional group or over a shared tier, the fetches below the tier also came from peers and the
     * shared tier, which are not egress, so the epoch's fetches are shared out as the node's were over its time (the
     * origin's bytes over all the bytes fetched below the tier).
     */
    static long originShare(long fetched, EpochRecord e, Counters end) {
        long peer = end.peerBytes() - e.atStart.peerBytes();
        long shared = end.sharedBytes() - e.atStart.sharedBytes();
        if (peer + shared <= 0) {
            return fetched;
        }
        long origin = end.meter().egressBytes() - e.atStart.meter().egressBytes();
        return origin + peer + shared <= 0 ? 0 : Math.round(fetched * ((double) origin / (origin + peer + shared)));
    }
}
