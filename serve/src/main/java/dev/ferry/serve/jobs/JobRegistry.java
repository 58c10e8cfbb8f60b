package dev.ferry.serve.jobs;

import dev.ferry.cache.BlockId;
import dev.ferry.metrics.Advisor;
import dev.ferry.metrics.EpochReport;
import dev.ferry.metrics.FerryMetrics;
import dev.ferry.serve.node.BlockHolders;
import dev.ferry.serve.node.Counters;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.node.RegionalGroup;
import dev.ferry.store.ObjectKey;
import dev.ferry.time.Clock;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The jobs registered on one node, by name: registering one starts its prefetcher and makes eviction follow
 * its plan; once a second {@link #sample()} records the status page's history and refreshes each job's advice
 * and gauges. Calls down into the {@link Node} (its plans, its group, its counters), never up; the one question
 * the node asks back, who read a block last epoch, it answers as the node's {@link BlockHolders}. Thread-safe.
 */
public final class JobRegistry implements BlockHolders {
    private static final Logger LOG = LoggerFactory.getLogger(JobRegistry.class);

    private final Node node;
    private final Map<String, RunningJob> jobs = new ConcurrentHashMap<>();
    private final ReentrantLock registering = new ReentrantLock();
    private final MeterRegistry registry;
    private final FerryMetrics steps;
    private final Clock clock;
    private final History history;
    /** Charges the local tier's reads and fetches to the jobs' epochs. */
    private final JobLedger ledger = new JobLedger();
    /**
     * Per job on /metrics: the current epoch's predicted and measured egress, the advisor's finding count, and the
     * epoch's samples/s, hit rate and wait share.
     */
    private final Map<String, AtomicLong[]> jobGauges = new ConcurrentHashMap<>();
    /** Per job with the node partition, in a regional group: the shards whose home is this node (read here, kept as owned). */
    private final Map<String, Set<ObjectKey>> homes = new ConcurrentHashMap<>();

    /**
     * Jobs on {@code node}, with their gauges in {@code registry} and their consumers' steps in {@code steps}
     * (the loader's meters); {@code clock}: the daemon's (the node's), which times the jobs' reports and the history.
     */
    public JobRegistry(Node node, MeterRegistry registry, FerryMetrics steps, Clock clock) {
        this.node = node;
        this.registry = registry;
        this.steps = steps;
        this.clock = clock;
        this.history = new History(300, clock);
        if (node.stack().cache() != null) {
            node.stack().cache().ledger(ledger);
        }
    }

    /** What a registration did: started a job, found the same one registered, or replaced another. */
    public enum Outcome {
        NEW, EXISTING, REPLACED;

        /** As the API answers it: {@code new}, {@code existing} or {@code replaced}. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The job now registered under the name, and how it got there. */
    public record Registration(RunningJob run, Outcome outcome) {
    }

    /** A registration under a name already taken by a different job, refused: {@link #differences()} say how they differ. */
    public static final class ConflictException extends Exception {
        private final List<String> differences;

        ConflictException(String job, List<String> differences) {
            super("job '" + job + "' is already registered on this daemon with other arguments: " + String.join("; ", differences)
                    + ". Every rank must register the same plan; register a new job under another name, or pass replace "
                    + "to replace this one (e.g. a job resumed on another world)");
            this.differences = List.copyOf(differences);
        }

        public List<String> differences() {
            return differences;
        }
    }

    /**
     * Registers a job, idempotently: every rank of a job may register it, with the same arguments, and the job
     * runs once (the first registration starts its prefetcher and its epoch 1; the others find it). A job that
     * differs from the one registered under its name is refused ({@link ConflictException}) unless
     * {@code replace}, which stops the old one and starts this one.
     */
    public Registration register(Job job, boolean replace) throws ConflictException {
        return register(job, replace, ClientGone.NEVER);
    }

    /**
     * As {@link #register(Job, boolean)}, for a client that may go: the new job's prediction and plans are built
     * first, checking {@code gone} between steps ({@link CancellationException}: nothing is registered, and a
     * job it would replace runs on), and only then does it start and take its name. One registration runs at a
     * time: others wait their turn, so the memory a plan takes while it is built (a few times what it keeps,
     * see {@link JobLimits}) is never taken twice at once, and a waiting one whose client goes stops waiting.
     */
    Registration register(Job job, boolean replace, ClientGone gone) throws ConflictException {
        try {
            while (!registering.tryLock(100, TimeUnit.MILLISECONDS)) {
                gone.check();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancellationException("interrupted while waiting to register job " + job.name);
        }
        try {
            return registerLocked(job, replace, gone);
        } finally {
            registering.unlock();
        }
    }

    private Registration registerLocked(Job job, boolean replace, ClientGone gone) throws ConflictException {
        RunningJob old = jobs.get(job.name);
        if (old != null) {
            List<String> differences = old.job.differences(job);
            if (differences.isEmpty()) {
                return new Registration(old, Outcome.EXISTING);
            }
            if (!replace) {
                throw new ConflictException(job.name, differences);
            }
            LOG.info("job {} replaced: {}", job.name, String.join("; ", differences));
        }
        RunningJob run = new RunningJob(job, node, steps, history, clock, gone);
        ledger.add(run); // before its first epoch starts its prefetcher: every fetch is charged
        boolean started = false;
        try {
            run.startEpoch(job.firstEpoch(), gone); // a resumed job starts in its checkpoint's epoch
            if (job.firstPosition() > 0) {
                run.progress(job.firstEpoch(), job.firstPosition(), 0, new double[0]); // prefetch and evict from the checkpoint on
            }
            started = true;
        } finally {
            if (!started) {
                ledger.remove(run);
                run.stop(); // releases what it holds (the trusted versions)
            }
        }
        jobs.put(job.name, run);
        if (old != null) {
            ledger.remove(old);
            old.stop();
        }
        homes(job);
        jobGauges(run);
        return new Registration(run, old == null ? Outcome.NEW : Outcome.REPLACED);
    }

    /** In a regional group: the group keeps the shards whose home is this node, by every job's plan, as owned. */
    private void homes(Job job) {
        RegionalGroup group = node.group();
        if (group == null) {
            return;
        }
        Set<ObjectKey> homed = job.homedShards();
        if (homed.isEmpty()) {
            homes.remove(job.name);
        } else {
            homes.put(job.name, homed);
        }
        group.homes(key -> homes.values().stream().anyMatch(h -> h.contains(key)));
    }

    /** Registers {@code job}, replacing a different job of the same name (an identical one is kept running). */
    public RunningJob register(Job job) {
        try {
            return register(job, true).run();
        } catch (ConflictException e) {
            throw new AssertionError("replace never conflicts", e);
        }
    }

    /** True while a registration is being planned (one at a time): what a status or a test can see of one under way. */
    public boolean registering() {
        return registering.isLocked();
    }

    /** The registered jobs by name (a read-only view). */
    public Map<String, RunningJob> jobs() {
        return Collections.unmodifiableMap(jobs);
    }

    History history() {
        return history;
    }

    /** The URL of the group member that read {@code block} last epoch by a registered job's plan, or null. */
    @Override
    public String holderOf(BlockId block) {
        for (RunningJob run : jobs.values()) {
            String m = run.holderOf(block);
            if (m != null) {
                return m;
            }
        }
        return null;
    }

    /** What keeping decoded samples would give a job, in a sentence (null: nothing measured); set by the API. */
    private volatile Function<String, String> decodedAdvice = job -> null;

    /** Where the advisor asks what keeping a job's decoded samples would give ({@link DecodedApi#advice}). */
    void decodedAdvice(Function<String, String> advice) {
        this.decodedAdvice = advice;
    }

    Function<String, String> decodedAdvice() {
        return decodedAdvice;
    }

    /** One point of history, and each job's advice and gauges refreshed: what the node's status thread runs each second. */
    public void sample() {
        try {
            List<RunningJob> runs = new ArrayList<>(jobs.values());
            Counters now = node.counters();
            history.sample(now, runs);
            for (RunningJob run : runs) {
                run.advice.refresh(run, now, node.stack().prices(), node.stack()::governorSummary, decodedAdvice);
                jobGauges(run);
            }
        } catch (RuntimeException e) {
            LOG.debug("status sample failed: {}", e.toString());
        }
    }

    private void jobGauges(RunningJob run) {
        AtomicLong[] g = jobGauges.computeIfAbsent(run.job.name, name -> {
            AtomicLong[] values = {new AtomicLong(-1), new AtomicLong(), new AtomicLong(), new AtomicLong(), new AtomicLong(),
                    new AtomicLong()};
            Gauge.builder("ferry.job.predicted.egress", values[0], AtomicLong::get)
                    .tag("job", name).baseUnit("bytes").description("egress the job's plan predicts for its current epoch on this node")
                    .register(registry);
            Gauge.builder("ferry.job.egress", values[1], AtomicLong::get)
                    .tag("job", name).baseUnit("bytes").description("egress measured in the job's current epoch").register(registry);
            Gauge.builder("ferry.job.findings", values[2], AtomicLong::get)
                    .tag("job", name).description("the advisor's findings for the job (the projection of its egress not counted)")
                    .register(registry);
            // the current epoch's other numbers, as its row in the status has them (doubles kept as their bits)
            Gauge.builder("ferry.job.samples.per.second", values[3], v -> Double.longBitsToDouble(v.get()))
                    .tag("job", name).description("samples/s in the job's current epoch, by its consumers' clocks").register(registry);
            Gauge.builder("ferry.job.local.hit.rate", values[4], v -> Double.longBitsToDouble(v.get()))
                    .tag("job", name).description("share of the current epoch's bytes resident before the epoch asked for them")
                    .register(registry);
            Gauge.builder("ferry.job.wait.share", values[5], v -> Double.longBitsToDouble(v.get()))
                    .tag("job", name).description("share of the consumers' time spent waiting in the current epoch").register(registry);
            return values;
        });
        EpochRecord cur = run.current();
        g[0].set(run.advice.predictedEgress(cur.number));
        EpochReport r;
        synchronized (run) {
            r = JobAdvice.report(cur, cur.atEnd != null ? cur.atEnd : node.counters(), -1, 1, node.stack().prices());
        }
        g[1].set(r.egressBytes());
        g[3].set(Double.doubleToLongBits(r.samplesPerSecond()));
        g[4].set(Double.doubleToLongBits(r.localHitRateBytes()));
        g[5].set(Double.doubleToLongBits(r.waitShare()));
        g[2].set(run.advice.findings().stream().filter(f -> !f.startsWith(Advisor.PROJECTED) && !f.startsWith(Advisor.NO_PROBLEM)).count());
    }

    /** Stops every job's prefetcher. */
    public void stopAll() {
        jobs.values().forEach(RunningJob::stop);
    }
}
