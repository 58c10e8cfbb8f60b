package dev.ferry.cache.policy;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Belady's MIN for a long-running cache whose future arrives at run time: a daemon serving many jobs over
 * hours, told each job's plan when it registers and each job's position as it reports progress.
 *
 * <p>Unlike {@link MinPolicy}, whose clock is the count of accesses it has seen, this policy's clock is each
 * consumer's reported position in its planned sequence ({@link #advanceTo}). Accesses therefore do not move
 * it: a prefetcher may read ahead, and clients may read in a slightly different order, without the
 * policy's idea of "now" drifting from the consumer's.
 *
 * <p><b>Several plans.</b> Each job has its own plan and position ({@link #plan(String, List, long)}); a
 * block's next use is the soonest over every job. With one plan, "soonest" is the planned index, exactly as
 * MIN ranks it. With several, indices of different jobs are not comparable (a slow evaluation job 10 blocks
 * from a block may need it later than a fast training job 100 blocks away), so the common unit is the
 * <i>estimated time</i> of the use: {@code anchor time + (index - anchor position) x the job's time per
 * block}, the pace measured from the job's own reports, a moving average of the time per block between
 * reports (the caller passes its clock; the policy reads none).
 * While a job keeps its pace those estimates stay valid and only the blocks it passes are re-ranked; a job
 * that drifts from its schedule by more than {@code tolerance} (a stalled job, a job that sped up) is
 * re-anchored at its current position and time, and every resident re-ranked. A job not yet measured takes
 * the mean pace of the measured ones.
 *
 * <p>Order: the entry whose next planned use is farthest goes first; entries with no planned use go before
 * any planned one, least recently used first. Without a plan it is LRU. Admission when room must be made:
 * a planned entry is admitted when it is needed sooner than the farthest resident; an unplanned one only
 * when the farthest resident is unplanned too (so unplanned reads never push out planned blocks, whichever
 * job planned them). With several plans, "needed" means needed again after the read that misses, as MIN
 * admits, and a block nobody needs again is never admitted when room must be made: a block one job reads
 * once is streamed through rather than evict another job's next block.
 *
 * <p>The single-plan methods ({@link #plan(List)}, {@link #advanceTo(long)}) act on one unnamed job, as the
 * simulator and replay use it.
 *
 * <p>Thread-safe (every method synchronizes on the policy): the cache calls it under its own lock, and the
 * daemon calls {@link #plan} and {@link #advanceTo} from request threads.
 */
public final class PlannedPolicy<K> implements EvictionPolicy<K> {
    private static final long NEVER = Long.MAX_VALUE;
    /** The unnamed job of the single-plan methods. */
    private static final String SOLE = "";
    /** A pace (nanoseconds per block) when no job has been measured yet: only its ratio to others matters. */
    static final long DEFAULT_NANOS_PER_BLOCK = 1_000_000;
    private static final long MAX_NANOS_PER_BLOCK = 10_000_000_000L;

    private record Resident<K>(long nextUse, long seq, K key) implements Comparable<Resident<K>> {
        /** Nearest use first; among equal uses the most recently touched first, so the last is the victim. */
        @Override
        public int compareTo(Resident<K> o) {
            int c = Long.compare(nextUse, o.nextUse);
            return c != 0 ? c : Long.compare(o.seq, seq);
        }
    }

    /** One job's future, where it is in it, and its schedule (anchor and pace) for the common time unit. */
    private static final class Plan<K> {
        final List<K> accesses;
        final Map<K, long[]> positions;
        long position;
        /** The last report that moved the position (the pace is measured between such reports). */
        long reportPosition;
        long reportNanos;
        /** Time per block, a moving average over reports; 0 until measured. */
        long nanosPerBlock;
        long anchorPosition;
        long anchorNanos;

        Plan(List<K> accesses, Map<K, long[]> positions) {
            this.accesses = accesses;
            this.positions = positions;
        }

        /** The next planned index at or after the position, or NEVER. */
        long nextIndex(K key) {
            long[] at = positions.get(key);
            if (at == null) {
                return NEVER;
            }
            int i = Arrays.binarySearch(at, position);
            if (i < 0) {
                i = -i - 1;
            }
            return i < at.length ? at[i] : NEVER;
        }

        long timeOf(long index, long pace) {
            return anchorNanos + (index - anchorPosition) * pace;
        }
    }

    private final long toleranceNanos;
    private final Map<String, Plan<K>> plans = new LinkedHashMap<>();
    private long sequence;
    private final Map<K, Resident<K>> residents = new HashMap<>();
    private final TreeSet<Resident<K>> order = new TreeSet<>();

    /** A policy that re-anchors a job drifting more than a second from its schedule. */
    public PlannedPolicy() {
        this(1_000_000_000L);
    }

    /** @param toleranceNanos how far a job may drift from its estimated schedule before it is re-anchored */
    public PlannedPolicy(long toleranceNanos) {
        if (toleranceNanos < 1) {
            throw new IllegalArgumentException("toleranceNanos must be positive: " + toleranceNanos);
        }
        this.toleranceNanos = toleranceNanos;
    }

    @Override
    public String name() {
        return "planned";
    }

    /** Replaces the future with {@code planned} (the accesses to come, in order); the position goes to 0. */
    public synchronized void plan(List<K> planned) {
        plan(SOLE, planned, 0);
    }

    /**
     * Replaces {@code job}'s future with {@code planned} (its accesses to come, in order), its position at 0 at
     * time {@code nowNanos}; the other jobs' plans stay. The job keeps the pace measured on its previous plan.
     */
    public synchronized void plan(String job, List<K> planned, long nowNanos) {
        List<K> accesses = List.copyOf(planned);
        // each key's planned indexes, in two passes (count, then fill) rather than a list of boxed indexes
        // per key: a plan of millions of distinct blocks costs a map entry and one array each
        Map<K, Integer> left = new HashMap<>();
        for (K k : accesses) {
            left.merge(k, 1, Integer::sum);
        }
        Map<K, long[]> next = new HashMap<>(left.size() * 4 / 3 + 1);
        for (int i = 0; i < accesses.size(); i++) {
            K k = accesses.get(i);
            int remaining = left.put(k, left.get(k) - 1);
            long[] at = next.get(k);
            if (at == null) {
                at = new long[remaining];
                next.put(k, at);
            }
            at[at.length - remaining] = i;
        }
        Plan<K> p = new Plan<>(accesses, next);
        Plan<K> old = plans.remove(job);
        p.nanosPerBlock = old == null ? 0 : old.nanosPerBlock;
        p.reportNanos = nowNanos;
        p.reportPosition = 0;
        p.anchorNanos = nowNanos;
        plans.put(job, p);
        if (plans.size() > 1) {
            reanchor(null, nowNanos);
        }
        rerankAll();
    }

    /** Drops {@code job}'s plan: its blocks count as planned only by the other jobs. */
    public synchronized void forget(String job) {
        if (plans.remove(job) != null) {
            rerankAll();
        }
    }

    /** The jobs with a plan, in the order they were planned. */
    public synchronized List<String> jobs() {
        return List.copyOf(plans.keySet());
    }

    /** The planned sequence's length (of the single-plan job). */
    public synchronized int planned() {
        Plan<K> p = plans.get(SOLE);
        return p == null ? 0 : p.accesses.size();
    }

    /** The consumer has made the accesses before {@code newPosition}; moving backwards is ignored. */
    public synchronized void advanceTo(long newPosition) {
        advanceTo(SOLE, newPosition, 0);
    }

    /**
     * {@code job}'s consumers have made the accesses before {@code newPosition} at time {@code nowNanos} (any
     * monotonic clock, the same for every job); moving backwards is ignored, as is a job with no plan.
     */
    public synchronized void advanceTo(String job, long newPosition, long nowNanos) {
        Plan<K> p = plans.get(job);
        if (p == null) {
            return;
        }
        long to = Math.min(newPosition, p.accesses.size());
        for (long i = p.position; i < to; i++) {
            K key = p.accesses.get((int) i);
            if (residents.containsKey(key)) {
                p.position = i + 1;
                touch(key, false);
            }
        }
        p.position = Math.max(p.position, to);
        measure(p, nowNanos);
        if (plans.size() > 1 && reanchor(job, nowNanos)) {
            rerankAll();
        }
    }

    public synchronized long position() {
        return position(SOLE);
    }

    /** {@code job}'s position in its plan (0 when it has none). */
    public synchronized long position(String job) {
        Plan<K> p = plans.get(job);
        return p == null ? 0 : p.position;
    }

    /** {@code job}'s measured time per planned block, 0 while unmeasured (for reports and tests). */
    public synchronized long nanosPerBlock(String job) {
        Plan<K> p = plans.get(job);
        return p == null ? 0 : p.nanosPerBlock;
    }

    /** Measures the reporting job's pace: a moving average of its time per block between reports. */
    private static <K> void measure(Plan<K> reporter, long now) {
        if (reporter.position > reporter.reportPosition && now > reporter.reportNanos) {
            long measured = Math.clamp((now - reporter.reportNanos) / (reporter.position - reporter.reportPosition), 1, MAX_NANOS_PER_BLOCK);
            // one report after a pause weighs a quarter, and fades
            reporter.nanosPerBlock = reporter.nanosPerBlock == 0 ? measured : (3 * reporter.nanosPerBlock + measured) / 4;
        }
        if (reporter.position > reporter.reportPosition) {
            reporter.reportPosition = reporter.position;
            reporter.reportNanos = now;
        }
    }

    /**
     * Re-anchors every job whose schedule is off by more than the tolerance at {@code now}: the reporter
     * ({@code job}, may be null) in either direction, the others when they fall behind (a job that stopped
     * reporting is expected to resume now, not to have read on). True when one was re-anchored.
     */
    private boolean reanchor(String job, long now) {
        boolean changed = false;
        for (Map.Entry<String, Plan<K>> e : plans.entrySet()) {
            Plan<K> p = e.getValue();
            long late = now - p.timeOf(p.position, pace(p));
            if (late > toleranceNanos || (e.getKey().equals(job) && -late > toleranceNanos)) {
                p.anchorPosition = p.position;
                p.anchorNanos = now;
                changed = true;
            }
        }
        return changed;
    }

    /** A job's pace, or the mean of the measured ones while it has none. */
    private long pace(Plan<K> p) {
        if (p.nanosPerBlock > 0) {
            return p.nanosPerBlock;
        }
        long sum = 0;
        int n = 0;
        for (Plan<K> q : plans.values()) {
            if (q.nanosPerBlock > 0) {
                sum += q.nanosPerBlock;
                n++;
            }
        }
        return n == 0 ? DEFAULT_NANOS_PER_BLOCK : sum / n;
    }

    @Override
    public synchronized long plannedUse(K key) {
        return nextUse(key);
    }

    /** The soonest planned use of {@code key}: its index with one plan, an estimated time with several. */
    private long nextUse(K key) {
        if (plans.size() == 1) {
            return plans.values().iterator().next().nextIndex(key);
        }
        long best = NEVER;
        for (Plan<K> p : plans.values()) {
            long i = p.nextIndex(key);
            if (i != NEVER) {
                best = Math.min(best, p.timeOf(i, pace(p)));
            }
        }
        return best;
    }

    /**
     * With several plans, the use a block being read now is kept for: the soonest planned use is taken to be
     * this read (a miss is the job's first unread use of the block), so that job's next occurrence after it
     * counts, and the other jobs' next ones. A block no job reads again is not worth an eviction: a one-pass
     * job's reads are streamed through, never pushing out what another job reads next. (With one plan the
     * rule stays as it was, the soonest use including this read, which the egress replay models.)
     */
    private long useAfterThisRead(K key) {
        Plan<K> reader = null;
        long soonest = NEVER;
        for (Plan<K> p : plans.values()) {
            long i = p.nextIndex(key);
            if (i != NEVER && p.timeOf(i, pace(p)) < soonest) {
                soonest = p.timeOf(i, pace(p));
                reader = p;
            }
        }
        long best = NEVER;
        for (Plan<K> p : plans.values()) {
            long i = p.nextIndex(key);
            if (p == reader) {
                long[] at = p.positions.get(key);
                int j = Arrays.binarySearch(at, i);
                i = j + 1 < at.length ? at[j + 1] : NEVER;
            }
            if (i != NEVER) {
                best = Math.min(best, p.timeOf(i, pace(p)));
            }
        }
        return best;
    }

    private void rerankAll() {
        for (K key : List.copyOf(residents.keySet())) {
            touch(key, false);
        }
    }

    /** Re-ranks a resident entry; {@code used} marks it most recently used. */
    private void touch(K key, boolean used) {
        Resident<K> old = residents.get(key);
        if (old == null) {
            return;
        }
        order.remove(old);
        Resident<K> r = new Resident<>(nextUse(key), used ? sequence++ : old.seq(), key);
        residents.put(key, r);
        order.add(r);
    }

    @Override
    public synchronized void onHit(K key) {
        touch(key, true);
    }

    @Override
    public synchronized boolean admit(K key, long weight, boolean mustEvict) {
        if (!mustEvict || order.isEmpty()) {
            return true;
        }
        long farthest = order.last().nextUse();
        if (plans.size() > 1) {
            // a block no job reads again is worth no eviction at all: it would take a planned block's room
            long next = useAfterThisRead(key);
            return next != NEVER && next < farthest;
        }
        long next = nextUse(key);
        return next == NEVER ? farthest == NEVER : next < farthest;
    }

    @Override
    public synchronized void onAdd(K key, long weight) {
        Resident<K> r = new Resident<>(nextUse(key), sequence++, key);
        Resident<K> old = residents.put(key, r);
        if (old != null) {
            order.remove(old);
        }
        order.add(r);
    }

    @Override
    public synchronized void onRemove(K key) {
        Resident<K> r = residents.remove(key);
        if (r != null) {
            order.remove(r);
        }
    }

    @Override
    public synchronized K victim(Predicate<K> evictable) {
        for (Iterator<Resident<K>> it = order.descendingIterator(); it.hasNext(); ) {
            Resident<K> r = it.next();
            if (evictable.test(r.key())) {
                return r.key();
            }
        }
        return null;
    }
}
