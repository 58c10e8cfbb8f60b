package dev.ferry.plan;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.CachingStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Clairvoyant prefetch: keeps a consumer's planned blocks in the local tier by the time it needs them. The
 * future is the sequence of blocks the consumer will read, in order; the consumer reports how far it got
 * ({@link #advance}). Each block that is neither resident nor being fetched is started when its time to need
 * comes within reach of a fetch:
 *
 * <pre>
 *   time to need(i) = (i - position) / pace
 *   start i when     time to need(i) <= margin * fetch time * (1 + fetches in flight / slots)
 * </pre>
 *
 * where the pace is the consumer's fastest recent pace (positions per second; held at its peak and decayed
 * slowly, so a consumer slowed by a late block does not make the prefetcher shallower) and the fetch time is
 * measured on this prefetcher's own fetches (first byte and transfer, what a block costs at the bandwidth share
 * it gets). The depth therefore follows what the consumer and the store deliver, not a fixed window: a fast
 * store and a slow consumer keep a few blocks ahead, a slow store and a fast consumer many.
 *
 * <p>Bounded: blocks started ahead of the consumer and not yet reached are at most {@code maxAheadBlocks} (the
 * disk the prefetch may hold ahead), fetches at most {@code slots} at a time; and the local tier's policy
 * decides what a prefetched block may evict ({@code admitAhead}: MIN keeps it only where demand MIN would keep it
 * at its read, with the victim it would choose then). A refused block (or a failed fetch) is asked for again
 * each time the consumer has moved on (the policy's answer may change), until the consumer reaches it. Before
 * the pace is measured (the first 50 ms of reports) it keeps one block per slot ahead.
 *
 * <p>Thread-safe: the consumer calls {@link #advance}; one driver thread starts fetches on virtual threads.
 */
public final class Prefetcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Prefetcher.class);
    /** Pace samples shorter than this are folded into the next one (timer noise). */
    private static final long PACE_WINDOW_NANOS = 50_000_000L;
    /** The peak pace decays by this factor per second without a faster sample. */
    private static final double PACE_DECAY_PER_SECOND = 0.9;
    /** How soon to look again at a block beyond the first slots while the pace is unmeasured. */
    private static final long UNMEASURED_RECHECK_NANOS = 50_000_000L;
    /** How long past its last report a consumer is taken to keep its pace. */
    private static final long MAX_EXTRAPOLATION_NANOS = 1_000_000_000L;

    /** Where blocks are fetched to: the local tier. */
    public interface Target {
        /** True when the block is on disk or being fetched. */
        boolean residentOrInFlight(BlockId block);

        /** Fetches the block into the local tier; the bytes fetched (0: the policy refused it, or it was there). */
        long fetch(BlockId block) throws IOException;

        /** The local tier itself: its residency, and its prefetch of one block pinned to its version. */
        static Target over(CachingStore cache) {
            return new Target() {
                @Override
                public boolean residentOrInFlight(BlockId block) {
                    return cache.residentOrInFlight(block);
                }

                @Override
                public long fetch(BlockId block) throws IOException {
                    return cache.prefetch(block);
                }
            };
        }
    }

    /**
     * {@code slots}: fetches at a time; {@code maxAheadBlocks}: blocks started ahead of the consumer and not yet
     * reached; {@code margin}: how many fetch times early a block is started; {@code initialFetchNanos}: the
     * fetch time assumed before one is measured.
     */
    public record Settings(int slots, int maxAheadBlocks, double margin, long initialFetchNanos) {
        public static final Settings DEFAULT = new Settings(8, 256, 4.0, 100_000_000L);

        public Settings {
            if (slots < 1 || maxAheadBlocks < 1) {
                throw new IllegalArgumentException("slots and maxAheadBlocks must be at least 1: " + slots + ", " + maxAheadBlocks);
            }
            if (!(margin >= 1) || initialFetchNanos < 1) {
                throw new IllegalArgumentException("margin must be at least 1 and initialFetchNanos positive: " + margin + ", " + initialFetchNanos);
            }
        }

        public Settings withSlots(int n) {
            return new Settings(n, maxAheadBlocks, margin, initialFetchNanos);
        }

        public Settings withMaxAheadBlocks(int n) {
            return new Settings(slots, n, margin, initialFetchNanos);
        }
    }

    /**
     * What the prefetcher did: blocks started, bytes fetched, blocks the policy refused, blocks the consumer
     * reached while their fetch was still running (late), failed fetches; and the current pace (positions/s),
     * fetch time (s) and horizon (s: how far ahead in time blocks are being started).
     */
    public record Stats(long started, long bytes, long refused, long late, long failed, double pace, double fetchSeconds, double horizonSeconds) {
    }

    private final List<BlockId> future;
    private final Target target;
    private final Settings settings;
    private final Clock clock;
    private final Semaphore slots;
    private final ExecutorService fetchers;
    private final Thread driver;
    private final Object lock = new Object();
    /** Positions started and not yet reached by the consumer (ahead of it). */
    private final TreeSet<Integer> ahead = new TreeSet<>();
    /** Positions whose fetch is running. */
    private final TreeSet<Integer> running = new TreeSet<>();
    /** Positions the policy refused, with the consumer's position then: asked again once it has moved on. */
    private final TreeMap<Integer, Integer> refusedAt = new TreeMap<>();
    private int position;
    private int cursor;
    private boolean looked; // guarded by lock: the driver has looked at the future and waits, with nothing to start now
    private double pace; // positions per second, peak-held
    private long paceSince;
    /** When the consumer last reported a new position: between reports it is taken to move on at its pace. */
    private long advancedAt;
    private int paceFrom;
    private double fetchNanos;
    private boolean closed;
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong late = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    public Prefetcher(String name, List<BlockId> future, Target target, Settings settings, Clock clock) {
        this.future = List.copyOf(future);
        this.target = Objects.requireNonNull(target, "target is null");
        this.settings = Objects.requireNonNull(settings, "settings is null");
        this.clock = Objects.requireNonNull(clock, "clock is null");
        this.slots = new Semaphore(settings.slots());
        this.fetchers = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("ferry-prefetch-" + name + "-", 0).factory());
        this.fetchNanos = settings.initialFetchNanos();
        this.paceSince = clock.nanoTime();
        this.advancedAt = paceSince;
        this.driver = Thread.ofVirtual().name("ferry-prefetch-" + name).unstarted(this::drive);
    }

    /**
     * Starts from what a previous prefetcher of the same consumer measured (its pace and fetch time: the
     * consumer's last epoch), so a new epoch does not begin as if nothing were known. Before {@link #start}.
     */
    public Prefetcher resumingFrom(Stats previous) {
        if (previous != null) {
            synchronized (lock) {
                if (previous.pace() > 0) {
                    pace = previous.pace();
                }
                if (previous.fetchSeconds() > 0) {
                    fetchNanos = previous.fetchSeconds() * 1e9;
                }
            }
        }
        return this;
    }

    /** Starts prefetching from position 0 (or where {@link #advance} put the consumer). */
    public Prefetcher start() {
        driver.start();
        return this;
    }

    /** The consumer has read everything before {@code position} in the future. */
    public void advance(int position) {
        synchronized (lock) {
            if (position <= this.position) {
                return;
            }
            long now = clock.nanoTime();
            // blocks passed while their fetch was running: the consumer waited on (part of) them
            late.addAndGet(running.subSet(this.position, position).size());
            ahead.headSet(position).clear();
            refusedAt.headMap(position).clear();
            this.position = position;
            this.advancedAt = now;
            long elapsed = now - paceSince;
            if (elapsed >= PACE_WINDOW_NANOS) {
                double observed = (position - paceFrom) / (elapsed / 1e9);
                double decayed = pace * Math.pow(PACE_DECAY_PER_SECOND, elapsed / 1e9);
                pace = Math.max(observed, decayed);
                paceSince = now;
                paceFrom = position;
            }
            looked = false; // the driver looks again at the new position
            lock.notifyAll();
        }
    }

    /**
     * Whether the driver has looked at the future since it last started a fetch and found nothing to start now (nothing
     * due, or no room ahead): what it would start for the current position has been started. A test awaits this
     * instead of sleeping past the driver's next look.
     */
    public boolean settled() {
        synchronized (lock) {
            return looked;
        }
    }

    public Stats stats() {
        synchronized (lock) {
            return new Stats(started.get(), bytes.get(), refused.get(), late.get(), failed.get(), pace, fetchNanos / 1e9, horizonNanosLocked() / 1e9);
        }
    }

    /** How far ahead in time a block is started now. */
    private double horizonNanosLocked() {
        return settings.margin() * fetchNanos * (1 + (double) running.size() / settings.slots());
    }

    private void drive() {
        try {
            while (true) {
                int next;
                synchronized (lock) {
                    next = nextLocked();
                    if (next < 0) {
                        return;
                    }
                    ahead.add(next);
                    running.add(next);
                }
                BlockId block = future.get(next);
                slots.acquire();
                synchronized (lock) {
                    if (next < position || closed) { // passed (or closed) while waiting for a slot: nothing to fetch
                        ahead.remove(next);
                        running.remove(next);
                        slots.release();
                        continue;
                    }
                }
                started.incrementAndGet();
                try {
                    fetchers.execute(() -> fetch(next, block));
                } catch (RejectedExecutionException e) {
                    slots.release();
                    return; // closed
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits for the next position to start (a refusal to ask again, or the next missing block when due); -1 once closed. */
    private int nextLocked() throws InterruptedException {
        while (!closed) {
            cursor = Math.max(cursor, position);
            // a resident block is passed over only once it is due: one resident now may be evicted before then
            while (cursor < future.size() && (ahead.contains(cursor)
                    || (dueInNanosLocked(cursor) <= 0 && target.residentOrInFlight(future.get(cursor))))) {
                cursor++;
            }
            boolean room = ahead.size() < settings.maxAheadBlocks();
            Integer retry = room ? retryLocked() : null;
            if (retry != null) {
                return retry;
            }
            long waitNanos = cursor < future.size() ? dueInNanosLocked(cursor) : Long.MAX_VALUE;
            if (room && waitNanos <= 0) {
                return cursor++;
            }
            looked = true;
            lock.wait(Math.max(1, Math.min(200, waitNanos <= 0 ? 200 : TimeUnit.NANOSECONDS.toMillis(waitNanos))));
            looked = false;
        }
        return -1;
    }

    /**
     * The first refused position worth asking for again: the consumer has moved since the refusal, and the
     * block is due and still missing. Taken out of the refusals (a new refusal puts it back).
     */
    private Integer retryLocked() {
        var it = refusedAt.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Integer, Integer> e = it.next();
            int index = e.getKey();
            if (dueInNanosLocked(index) > 0) {
                return null; // the later ones are due later still
            }
            if (e.getValue() >= position) {
                continue; // refused at this very position: nothing has changed for it yet
            }
            it.remove();
            if (!target.residentOrInFlight(future.get(index)) && !ahead.contains(index)) {
                return index;
            }
        }
        return null;
    }

    /** Nanoseconds until the block at {@code index} must be started (0 or less: now). */
    private long dueInNanosLocked(int index) {
        if (pace <= 0) {
            // not measured yet: one block per slot ahead; deeper would evict by what is known now for reads
            // further off, when the cache's choices are better made closer to them
            return index - position < settings.slots() ? 0 : UNMEASURED_RECHECK_NANOS;
        }
        // between reports the consumer is taken to move on at its pace (for at most a second)
        long sinceReport = Math.min(MAX_EXTRAPOLATION_NANOS, clock.nanoTime() - advancedAt);
        double timeToNeed = (index - position) / pace * 1e9 - sinceReport;
        return (long) (timeToNeed - horizonNanosLocked());
    }

    private void fetch(int index, BlockId block) {
        long t0 = clock.nanoTime();
        try {
            long n = target.fetch(block);
            if (n > 0) {
                bytes.addAndGet(n);
                long took = clock.nanoTime() - t0;
                synchronized (lock) {
                    fetchNanos = 0.8 * fetchNanos + 0.2 * took;
                }
            } else if (!target.residentOrInFlight(block)) {
                refused.incrementAndGet();
                askAgainLater(index);
            }
        } catch (IOException | RuntimeException e) {
            failed.incrementAndGet();
            LOG.debug("prefetch of {} block {} failed: {}", block.key(), block.index(), e.toString());
            askAgainLater(index);
        } finally {
            slots.release();
            synchronized (lock) {
                running.remove(index);
                looked = false; // a slot is free
                lock.notifyAll();
            }
        }
    }

    /** A block that did not come (refused, or failed) holds no room, and is asked for once the consumer moves on. */
    private void askAgainLater(int index) {
        synchronized (lock) {
            ahead.remove(index);
            if (index >= position) {
                refusedAt.put(index, position);
            }
        }
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            lock.notifyAll();
        }
        driver.interrupt();
        // fetches already running finish: interrupting one would fail the readers waiting on its block
        fetchers.shutdown();
    }
}
