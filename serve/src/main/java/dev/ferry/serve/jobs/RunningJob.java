package dev.ferry.serve.jobs;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.CachingStore;
import dev.ferry.metrics.FerryMetrics;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.Prefetcher;
import dev.ferry.serve.node.Counters;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.node.PlanSink;
import dev.ferry.serve.node.RegionalGroup;
import dev.ferry.store.ObjectKey;
import dev.ferry.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A registered job at run time: the epoch its consumers are in, their position, and a {@link Prefetcher} that
 * keeps this node's planned blocks on local disk by the time the consumers need them (by time to need, at
 * most {@code prefetch-bytes} ahead, at most {@link PlanSink#prefetchSlots()} fetches at a time). Eviction follows the same plan (this
 * epoch's blocks, then the next epoch's), with the reported position as its clock; both through the node's
 * {@link PlanSink}, under the job's name. Thread-safe.
 */
public final class RunningJob {
    final Job job;
    private final Node node;
    private final PlanSink plans;
    private final FerryMetrics steps;
    private final History history;
    private final Clock clock;
    private EpochRecord current;
    private Job.NodeFuture future;
    private Job.NodeFuture evictionFuture;
    private List<BlockId> planned = List.of();
    private long blockPosition;
    private volatile boolean stopped;
    /** For this epoch's blocks: the node number of the job that read each one last epoch. */
    private volatile Map<BlockId, Integer> holders = Map.of();
    /** The group's members when this epoch started, in the job's node order (null: hints do not apply). */
    private volatile List<String> hintMembers;
    /** This epoch's prefetcher (null: prefetch is off, or the job has stopped). */
    private Prefetcher prefetcher;
    /** What the ledger charges to the job now (null before its first epoch). */
    private volatile Charges charges;

    /**
     * The epoch in progress, the blocks this node reads in it ({@code now}) and in the next ({@code next}), and the
     * epoch's samples and bytes by its plan (for {@link #behind}).
     */
    record Charges(EpochRecord epoch, Set<BlockId> now, Set<BlockId> next, long samples, long plannedBytes, long startPosition) {
        /** True once the consumers reported the epoch's last sample: nothing more of it is theirs to read. */
        boolean done() {
            return samples > 0 && epoch.position >= samples;
        }

        /**
         * How far the reads charged so far lag the consumers' reported position: its share of the epoch less theirs, both
         * counted from where the epoch began here (a resumed epoch begins at its checkpoint).
         */
        double behind() {
            long left = samples - startPosition;
            double position = left <= 0 ? 0 : (double) Math.max(0, epoch.position - startPosition) / left;
            double planned = samples <= 0 ? 0 : plannedBytes * ((double) left / samples);
            double read = planned <= 0 ? 0 : epoch.reads.bytes() / planned;
            return position - read;
        }
    }

    final JobAdvice advice;
    /** The manifest's versions, read with no revalidation while the job is registered (null: an explicit job). */
    private final CachingStore.TrustedVersions trusted;

    /**
     * Predicts the job's egress (checking {@code gone} between epochs), then trusts its manifest's versions
     * until {@link #stop}; {@link #startEpoch} starts it. Its consumers' steps are counted in {@code steps};
     * {@code clock} times their reports.
     */
    RunningJob(Job job, Node node, FerryMetrics steps, History history, Clock clock, ClientGone gone) {
        this.job = job;
        this.node = node;
        this.plans = node.plans();
        this.steps = steps;
        this.history = history;
        this.clock = clock;
        // predicted from what the tier holds now (a dataset indexed or read through the daemon before the job is here already)
        CachingStore tier = node.stack().cache();
        this.advice = new JobAdvice(job, node.config().cacheSize(), node.config().blockSize(), plans.prefetchSlots(), gone,
                tier == null ? block -> false : tier::residentOrInFlight);
        Manifest manifest = job.manifest();
        if (manifest == null) {
            this.trusted = null;
        } else {
            Map<ObjectKey, String> versions = new HashMap<>();
            manifest.shards().forEach(s -> versions.put(s.key(), s.etag()));
            this.trusted = node.stack().cache().trustVersions(versions);
        }
    }

    /**
     * Which other node read each of {@code mine}'s blocks in {@code previous}: the plan says so, for every
     * node of the job's world, so a daemon can ask that node's daemon first (it may still hold the block).
     */
    private Map<BlockId, Integer> lastReaders(int previous, Job.NodeFuture mine, int blockSize) {
        Set<BlockId> wanted = new HashSet<>();
        wanted.addAll(mine.blocks());
        Map<BlockId, Integer> out = new HashMap<>();
        for (int m = 0; m < job.nodes(); m++) {
            if (m == job.node()) {
                continue;
            }
            for (BlockId b : job.nodeFuture(previous, blockSize, m).blocks()) {
                if (wanted.contains(b)) {
                    out.put(b, m);
                }
            }
        }
        return out;
    }

    /** How many of this epoch's blocks have a hint (0 until they are computed, a moment after the epoch starts). */
    public int hints() {
        return holders.size();
    }

    /** The URL of the group member that read {@code block} last epoch, or null. */
    String holderOf(BlockId block) {
        Integer m = holders.get(block);
        List<String> members = hintMembers;
        return m == null || members == null ? null : members.get(m);
    }

    /** What the tier's reads and fetches are charged to now (null before the first epoch). */
    Charges charges() {
        return charges;
    }

    synchronized EpochRecord current() {
        return current;
    }

    /** The record of epoch {@code number}, or the current one when that epoch has none (not begun, or long gone). */
    EpochRecord epoch(int number) {
        synchronized (job.epochs) {
            for (int i = job.epochs.size() - 1; i >= 0; i--) {
                if (job.epochs.get(i).number == number) {
                    return job.epochs.get(i);
                }
            }
        }
        return current();
    }

    synchronized long blockPosition() {
        return blockPosition;
    }

    synchronized int plannedBlocks() {
        return future == null ? 0 : future.blocks().size();
    }

    /** Moves the job to {@code epoch}: a new record, and this epoch's (and the next one's) blocks as the plan. */
    synchronized void startEpoch(int epoch) {
        startEpoch(epoch, ClientGone.NEVER);
    }

    /**
     * As {@link #startEpoch(int)}, building the futures first and checking {@code gone} between them: nothing
     * changes (record, eviction, prefetch) until every one is built.
     */
    synchronized void startEpoch(int epoch, ClientGone gone) {
        int blockSize = node.config().blockSize();
        gone.check();
        Job.NodeFuture mine = job.nodeFuture(epoch, blockSize);
        // Eviction follows what will be read here: this node's reads, or in a regional group every node's
        // (a member serves the others the blocks it owns), this epoch's and then the next one's.
        List<String> members = hintMembers();
        boolean group = members != null;
        gone.check();
        Job.NodeFuture eviction = group ? job.groupFuture(epoch, blockSize) : mine;
        // a job that said how many epochs it runs reads no epoch after its last: planning one would keep
        // its blocks from the other jobs (an evaluation pass registered with "epochs": 1 plans that pass only)
        boolean another = job.plannedEpochs() == 0 || epoch < job.plannedEpochs();
        gone.check();
        Job.NodeFuture nextMine = another ? job.nodeFuture(epoch + 1, blockSize) : null;
        gone.check();
        List<BlockId> next = blocks(eviction, another ? (group ? job.groupFuture(epoch + 1, blockSize) : nextMine) : null);
        gone.check();
        Counters now = node.counters();
        if (current != null) {
            current.atEnd = now;
        }
        current = new EpochRecord(epoch, now.nanos(), now, job.ranks());
        synchronized (job.epochs) {
            job.epochs.add(current);
        }
        Set<BlockId> reads = new HashSet<>(mine.blocks());
        charges = new Charges(current, reads, nextMine == null ? Set.of() : new HashSet<>(nextMine.blocks()), job.samplesPerEpoch(),
                job.nodeBytes(epoch), epoch == job.firstEpoch() ? job.firstPosition() : 0);
        future = mine;
        evictionFuture = eviction;
        planned = next;
        hintMembers = members;
        blockPosition = 0;
        plans.follow(job.name, planned, 0, true);
        holders = Map.of();
        if (epoch >= 2 && group) {
            Thread.ofVirtual().name("ferry-hints-" + job.name).start(() -> holders = lastReaders(epoch - 1, mine, blockSize));
        }
        if (prefetcher != null) {
            prefetcher.close();
        }
        if (!stopped) {
            // this node's blocks of this epoch, then of the next: its first blocks are fetched before its first report
            prefetcher = plans.prefetcher(job.name + "-epoch" + epoch, group ? blocks(future, nextMine) : planned);
        }
    }

    /**
     * Peer hints need a regional group whose members are, in order, the job's nodes, with this daemon among them:
     * the members now when they are (node {@code i} of the job is member {@code i}), else null.
     */
    private List<String> hintMembers() {
        RegionalGroup group = node.group();
        if (group == null) {
            return null;
        }
        List<String> members = group.members();
        String self = group.self();
        return self != null && members.size() == job.nodes() && members.indexOf(self) == job.node() ? members : null;
    }

    /** The blocks of {@code first}, then those of {@code then} (null: none). */
    private static List<BlockId> blocks(Job.NodeFuture first, Job.NodeFuture then) {
        List<BlockId> ids = new ArrayList<>(first.blocks().size() + (then == null ? 0 : then.blocks().size()));
        ids.addAll(first.blocks());
        if (then != null) {
            ids.addAll(then.blocks());
        }
        return ids;
    }

    /** What this epoch's prefetcher has done (null when prefetch is off). */
    synchronized Prefetcher.Stats prefetchStats() {
        return prefetcher == null ? null : prefetcher.stats();
    }

    /** A report of rank 0 that says nothing of its own clock (as older clients send). */
    public void progress(int epoch, long position, long samples, double[] waitsMillis) {
        progress(epoch, position, samples, waitsMillis, 0, Double.NaN);
    }

    /**
     * A consumer's report: the job's global position this epoch, samples consumed and its wait for each step
     * since its last report, its rank, and the seconds the report covers by the consumer's own clock
     * ({@code elapsedSeconds}; NaN: not said). A report for an epoch already left behind only adds its samples and
     * waits.
     */
    public void progress(int epoch, long position, long samples, double[] waitsMillis, int rank, double elapsedSeconds) {
        synchronized (this) {
            if (epoch > current.number) {
                startEpoch(epoch);
            }
            EpochRecord e = current;
            if (epoch == current.number) {
                e.position = Math.max(e.position, position);
                blockPosition = Math.max(blockPosition, future.indexOfPosition(e.position, job.ranks()));
                if (prefetcher != null) {
                    prefetcher.advance((int) Math.min(Integer.MAX_VALUE, blockPosition));
                }
                plans.follow(job.name, planned, evictionFuture.indexOfPosition(e.position, job.ranks()), false);
            } else {
                synchronized (job.epochs) {
                    e = job.epochs.stream().filter(x -> x.number == epoch).findFirst().orElse(null);
                }
                if (e == null) {
                    return;
                }
            }
            e.samples += samples;
            e.steps += waitsMillis.length;
            e.lastReportNanos = clock.nanoTime();
            long reportMicros = 0;
            long longestMicros = 0;
            for (double w : waitsMillis) {
                // at most the histogram's hour: a client's absurd figure must not overflow the sums the status divides
                long micros = Math.min(e.waits.getHighestTrackableValue(), Math.max(0, Math.round(w * 1000)));
                e.waits.recordValue(micros);
                e.waitTotalMicros += micros;
                reportMicros += micros;
                longestMicros = Math.max(longestMicros, micros);
                history.recordWait(micros);
            }
            e.rankReport(rank, reportMicros / 1e6, longestMicros / 1e6, elapsedSeconds);
            history.recordSamples(samples);
        }
        // the samples shared out over the steps, the remainder one each to the first (an epoch's last batch is short)
        int n = waitsMillis.length;
        long perStep = n == 0 ? 0 : samples / n;
        long remainder = n == 0 ? 0 : samples % n;
        for (int i = 0; i < n; i++) {
            steps.step(epoch, (int) (perStep + (i < remainder ? 1 : 0)), Math.round(waitsMillis[i] * 1e6));
        }
    }

    synchronized void stop() {
        stopped = true;
        if (trusted != null) {
            trusted.close();
        }
        if (prefetcher != null) {
            prefetcher.close();
            prefetcher = null;
        }
    }
}
