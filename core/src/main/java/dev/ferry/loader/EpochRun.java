package dev.ferry.loader;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.CachingStore;
import dev.ferry.plan.BlockRead;
import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.RankAssignment;
import dev.ferry.plan.Prefetcher;
import dev.ferry.plan.Shard;
import dev.ferry.plan.ShardMix;
import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * One rank's pass over one epoch: fetchers read the rank's samples in plan order and decode workers decode
 * them, a window of samples ahead of the consumer, sized from the consumption rate and read latency (the
 * plan says exactly what comes next, so reading ahead is prefetching); {@link #next()} hands out batches in
 * order and measures how long the consumer waited for each: the accelerator's wait per step.
 *
 * <p>A sample is read as the byte range its shard's index gives (one ranged GET, or a hit in the local
 * tier) pinned to the manifest's ETag, so a changed object fails the read ("object changed") rather than
 * mixing versions. Shards whose key does not end in {@code .tar} are raw objects, one sample each.
 *
 * <p>Over the local tier ({@link CachingStore}) a {@link Prefetcher} also fetches the rank's planned blocks
 * into the tier by the time the reads reach them (by time to need, on disk, not in memory), so the in-memory
 * window only has to cover reads from the tier. Decodes run in plan order when several are ready (the
 * sample needed first is decoded first), so a window of fast hits never holds back an earlier sample.
 *
 * <p>Not thread-safe: one consumer. Close it to stop the workers.
 */
public final class EpochRun<T> implements Iterator<Batch<T>>, AutoCloseable {
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final ObjectStore store;
    private final EpochPlan plan;
    private final long seed;
    private final int ranks;
    private final long start;
    private final int[] samples;
    private final double shardMix;
    private final LoaderConfig config;
    private final Decoder<T> decoder;
    private final ExecutorService fetchers;
    private final ThreadPoolExecutor workers;
    private final Prefetcher prefetcher;
    /** For each of the rank's samples, where its first block is in the prefetcher's future. */
    private final int[] prefetchPosition;
    private final ArrayDeque<CompletableFuture<T>> window = new ArrayDeque<>();
    private final ArrayDeque<Long> windowBytes = new ArrayDeque<>();
    private final ReadAheadBudget budget;
    /** Told the prefetcher's last measurements when the run closes, for the next epoch's to start from. */
    private final Consumer<Prefetcher.Stats> prefetchMemory;
    private long wastedSamples;
    private long wastedBytes;
    private int target;
    private double rate; // samples/s consumed, smoothed
    private double latency; // seconds per sample read, smoothed
    private final LongAdder readNanos = new LongAdder();
    private final LongAdder reads = new LongAdder();
    private final Histogram waits = new Histogram(3_600_000_000L, 3);
    private final LongAdder bytes = new LongAdder();
    private final RankAssignment deal;
    /** Times reads and the consumer's waits, and paces the prefetcher. */
    private final Clock clock;
    private int submitted;
    private int delivered;
    private int steps;
    private long waitTotal;
    private long firstNext;
    private long lastNext;
    private boolean closed;

    EpochRun(ObjectStore store, RankAssignment deal, EpochPlan plan, long seed, int rank, LoaderConfig config, Decoder<T> decoder,
            ReadAheadBudget budget, Prefetcher.Stats lastPrefetch, Consumer<Prefetcher.Stats> prefetchMemory, Clock clock) {
        this.clock = clock;
        this.budget = budget;
        this.prefetchMemory = prefetchMemory;
        this.store = store;
        this.plan = plan;
        this.seed = seed;
        this.ranks = deal.world().ranks();
        this.start = deal.start();
        this.deal = deal;
        this.samples = deal.rankSamples(rank);
        this.shardMix = ShardMix.of(plan, Math.max(1, config.batchSize() * ranks));
        this.config = config;
        this.decoder = decoder;
        this.workers = new ThreadPoolExecutor(config.decodeWorkers(), config.decodeWorkers(), 0, TimeUnit.MILLISECONDS,
                new PriorityBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "ferry-decode-" + THREADS.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        this.fetchers = Executors.newFixedThreadPool(config.fetchConcurrency(), r -> {
            Thread t = new Thread(r, "ferry-fetch-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.target = config.adaptive() ? Math.min(config.aheadSamples(), 2 * config.batchSize()) : config.aheadSamples();
        if (store instanceof CachingStore cache && !cache.isPassThrough()) {
            this.prefetchPosition = new int[samples.length];
            this.prefetcher = prefetcher(cache, rank, lastPrefetch);
        } else {
            this.prefetchPosition = null;
            this.prefetcher = null;
        }
        fill();
    }

    /**
     * The rank's planned blocks in read order (a block read by consecutive samples once), and where each
     * sample's first block is in that sequence; the prefetcher holds at most a quarter of the tier ahead.
     */
    private Prefetcher prefetcher(CachingStore cache, int rank, Prefetcher.Stats last) {
        int blockSize = cache.config().blockSize();
        List<BlockId> future = new ArrayList<>();
        List<BlockRead> reads = new ArrayList<>(2);
        for (int k = 0; k < samples.length; k++) {
            reads.clear();
            plan.addBlocks(samples[k], blockSize, reads);
            prefetchPosition[k] = future.size();
            for (BlockRead r : reads) {
                if (future.isEmpty() || !future.get(future.size() - 1).equals(r.block())) {
                    future.add(r.block());
                } else if (r == reads.get(0)) {
                    prefetchPosition[k] = future.size() - 1; // it starts in the block the sample before ended in
                }
            }
        }
        int quarter = (int) Math.max(1, Math.min(Integer.MAX_VALUE, cache.config().capacity() / 4 / blockSize));
        Prefetcher.Settings settings = Prefetcher.Settings.DEFAULT
                .withMaxAheadBlocks(Math.min(Prefetcher.Settings.DEFAULT.maxAheadBlocks(), quarter));
        return new Prefetcher("epoch" + plan.epoch() + "-rank" + rank, future, Prefetcher.Target.over(cache), settings, clock)
                .resumingFrom(last).start();
    }

    /** A decode, ordered by its sample's place in the plan: the worker that frees up decodes the earliest one. */
    private record Ordered(int sequence, Runnable task) implements Runnable, Comparable<Ordered> {
        @Override
        public void run() {
            task.run();
        }

        @Override
        public int compareTo(Ordered o) {
            return Integer.compare(sequence, o.sequence);
        }
    }

    /** Keeps {@code target} samples in flight: read on the fetchers, then decoded on the workers. */
    private void fill() {
        while (window.size() < target && submitted < samples.length) {
            long bytes = spanOf(samples[submitted]);
            if (budget != null && !budget.tryAcquire(bytes, window.isEmpty())) {
                return; // the process-wide read-ahead budget is spent: wait for consumers to take samples
            }
            windowBytes.add(bytes);
            if (prefetcher != null) {
                prefetcher.advance(prefetchPosition[submitted]);
            }
            int sequence = submitted;
            int sample = samples[submitted++];
            if (decoder == Decoder.Identity.INSTANCE) {
                @SuppressWarnings("unchecked")
                CompletableFuture<T> raw = (CompletableFuture<T>) CompletableFuture.supplyAsync(() -> timedRead(sample), fetchers);
                window.add(raw);
                continue;
            }
            window.add(CompletableFuture.supplyAsync(() -> timedRead(sample), fetchers).thenApplyAsync(s -> {
                try {
                    return decoder.decode(s);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, r -> workers.execute(new Ordered(sequence, r))));
        }
    }

    private long spanOf(int sample) {
        Span span = span(sample);
        return Math.max(0, span.to() - span.from());
    }

    private Sample timedRead(int sample) {
        long t0 = clock.nanoTime();
        try {
            return read(sample);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            readNanos.add(clock.nanoTime() - t0);
            reads.increment();
        }
    }

    /**
     * Little's law: to keep up with a consumer taking {@code rate} samples/s from reads that take
     * {@code latency} s each, about {@code rate * latency} samples must be in flight; twice that, plus a
     * batch, absorbs bursts. Bounded by {@code aheadSamples}.
     */
    private void resize(int batch, long batchNanos) {
        if (!config.adaptive() || batchNanos <= 0) {
            return;
        }
        double observed = batch / (batchNanos / 1e9);
        rate = rate == 0 ? observed : 0.8 * rate + 0.2 * observed;
        long n = reads.sumThenReset();
        long total = readNanos.sumThenReset();
        if (n > 0) {
            double perRead = total / 1e9 / n;
            latency = latency == 0 ? perRead : 0.8 * latency + 0.2 * perRead;
        }
        int wanted = (int) Math.ceil(2 * rate * latency) + config.batchSize();
        target = Math.max(config.batchSize(), Math.min(config.aheadSamples(), wanted));
    }

    /** Samples read or being read ahead of the consumer right now (the prefetch window). */
    public int window() {
        return target;
    }

    /** Where a sample lies: its shard, its index there, and its byte range [from, to). */
    private record Span(Shard shard, int index, long from, long to) {
    }

    private Span span(int sample) {
        Shard shard = plan.manifest().shards().get(plan.shardOf(sample));
        int index = plan.indexInShard(sample);
        return new Span(shard, index, shard.sampleOffset(index), shard.sampleOffset(index + 1));
    }

    private Sample read(int sample) throws IOException {
        Span span = span(sample);
        Shard shard = span.shard();
        int index = span.index();
        long from = span.from();
        long to = span.to();
        byte[] data;
        if (to <= from) {
            data = new byte[0];
        } else {
            try (ObjectContent c = store.get(new GetRequest(shard.key(), ByteRange.of(from, to - from), shard.etag()))) {
                data = new byte[(int) c.length()]; // one copy, straight from the block into place
                int got = c.stream().readNBytes(data, 0, data.length);
                if (got != data.length) {
                    throw new StoreException(StoreException.Kind.RETRYABLE, 0, "sample " + index + " of " + shard.key()
                            + " ended after " + got + " of " + data.length + " bytes", null);
                }
            }
        }
        bytes.add(data.length);
        if (!shard.key().key().endsWith(".tar")) {
            return new Sample(shard.key(), shard.key().key(), Map.of("bin", data));
        }
        if (shard.sampleOffsets() == null && shard.samples() > 1) {
            throw new IOException("shard " + shard.key() + " has " + shard.samples() + " samples but no sample index in the manifest");
        }
        List<Sample> parsed = TarShards.parse(shard.key(), data);
        if (parsed.size() != 1) {
            throw new StoreException(StoreException.Kind.FATAL, 0, "sample " + index + " of " + shard.key() + " at bytes "
                    + from + "-" + to + " holds " + parsed.size() + " samples, not 1: the manifest's index does not match the shard", null);
        }
        return parsed.get(0);
    }

    @Override
    public boolean hasNext() {
        return delivered < samples.length;
    }

    /** The next batch; blocks until its samples are decoded, and records how long that took. */
    @Override
    public Batch<T> next() {
        if (!hasNext()) {
            throw new NoSuchElementException("epoch " + plan.epoch() + " is done");
        }
        long begin = clock.nanoTime();
        if (firstNext == 0) {
            firstNext = begin;
        }
        long sinceLast = lastNext == 0 ? 0 : begin - lastNext;
        int size = Math.min(config.batchSize(), samples.length - delivered);
        List<T> batch = new ArrayList<>(size);
        try {
            for (int i = 0; i < size; i++) {
                CompletableFuture<T> f = window.poll();
                long bytes = windowBytes.poll();
                try {
                    batch.add(f.get());
                } finally {
                    if (budget != null) {
                        budget.release(bytes);
                    }
                }
                delivered++;
                fill();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UncheckedIOException(new InterruptedIOException("interrupted while waiting for a batch"));
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof UncheckedIOException u ? u.getCause() : e.getCause();
            throw new UncheckedIOException(cause instanceof IOException io ? io : new IOException(cause.toString(), cause));
        }
        long waited = clock.nanoTime() - begin;
        resize(size, sinceLast + waited);
        fill();
        waits.recordValue(Math.min(waits.getHighestTrackableValue(), Math.max(0, waited / 1000)));
        waitTotal += waited;
        lastNext = clock.nanoTime();
        return new Batch<>(steps++, batch, waited);
    }

    /** The checkpoint after the batches delivered so far (all ranks step together). */
    public LoaderState state() {
        long consumed = Math.min(plan.size(), start + (long) delivered * ranks);
        return new LoaderState(plan.epoch(), consumed, seed, plan.canonicalNodes(), deal.homes(), deal.roundHomesAt(consumed));
    }

    /** Samples this rank reads in this epoch (from its start position). */
    public int size() {
        return samples.length;
    }

    /** The loader's side of the four numbers, so far in this epoch. */
    public LoaderStats stats() {
        double seconds = firstNext == 0 ? 0 : (lastNext - firstNext) / 1e9;
        return new LoaderStats(plan.epoch(), delivered, steps, seconds, seconds > 0 ? delivered / seconds : 0,
                waits.getTotalCount() == 0 ? 0 : waits.getValueAtPercentile(50) / 1000.0,
                waits.getTotalCount() == 0 ? 0 : waits.getValueAtPercentile(99) / 1000.0,
                waitTotal / 1e9, waits.getTotalCount() == 0 ? 0 : waits.getMaxValue() / 1e6, bytes.sum(), wastedSamples, wastedBytes, shardMix);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (CompletableFuture<T> f : window) {
            long bytes = windowBytes.poll();
            if (f.isDone() && !f.isCompletedExceptionally()) {
                wastedSamples++; // read ahead, never consumed
                wastedBytes += bytes;
            }
            f.cancel(true);
            if (budget != null) {
                budget.release(bytes);
            }
        }
        window.clear();
        if (prefetcher != null) {
            prefetcher.close();
            if (prefetchMemory != null) {
                prefetchMemory.accept(prefetcher.stats());
            }
        }
        fetchers.shutdownNow();
        workers.shutdownNow();
    }
}
