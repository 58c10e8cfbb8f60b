package dev.ferry.serve;

import dev.ferry.cache.BlockId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;

/**
 * A registered job at run time: the epoch its consumers are in, their position, and a prefetcher that keeps
 * this node's next planned blocks on local disk: from the consumers' position up to {@code prefetch-bytes}
 * ahead, at most {@link Daemon#prefetchThreads()} fetches at a time. Eviction follows the same plan (this
 * epoch's blocks, then the next epoch's), with the reported position as its clock. Thread-safe.
 */
final class JobRun {
    final Job job;
    private final Daemon daemon;
    private final Object signal = new Object();
    private Job.Epoch current;
    private Job.NodeFuture future;
    private List<BlockId> planned = List.of();
    private long blockPosition;
    private int cursor;
    private volatile boolean stopped;
    private final Thread prefetcher;

    JobRun(Job job, Daemon daemon) {
        this.job = job;
        this.daemon = daemon;
        this.prefetcher = Thread.ofVirtual().name("ferry-prefetch-" + job.name).unstarted(this::prefetchLoop);
    }

    synchronized Job.Epoch current() {
        return current;
    }

    synchronized long blockPosition() {
        return blockPosition;
    }

    synchronized int plannedBlocks() {
        return future == null ? 0 : future.blocks().size();
    }

    /** Moves the job to {@code epoch}: a new record, and this epoch's (and the next one's) blocks as the plan. */
    synchronized void startEpoch(int epoch) {
        Daemon.Counters now = daemon.counters();
        if (current != null) {
            current.atEnd = now;
        }
        current = new Job.Epoch(epoch, now.nanos(), now);
        synchronized (job.epochs) {
            job.epochs.add(current);
        }
        int blockSize = daemon.config().blockSize();
        future = job.nodeFuture(epoch, blockSize);
        List<BlockId> ids = new ArrayList<>(future.blocks().size() * 2);
        future.blocks().forEach(b -> ids.add(b.block()));
        job.nodeFuture(epoch + 1, blockSize).blocks().forEach(b -> ids.add(b.block()));
        planned = ids;
        blockPosition = 0;
        cursor = 0;
        daemon.follow(this, planned, 0, true);
        if (prefetcher.getState() == Thread.State.NEW) {
            prefetcher.start();
        }
        wake();
    }

    /**
     * A consumer's report: the job's global position this epoch, samples consumed and its wait for each step
     * since its last report. A report for an epoch already left behind only adds its samples and waits.
     */
    void progress(int epoch, long position, long samples, double[] waitsMillis) {
        synchronized (this) {
            if (epoch > current.number) {
                startEpoch(epoch);
            }
            Job.Epoch e = current;
            if (epoch == current.number) {
                e.position = Math.max(e.position, position);
                blockPosition = Math.max(blockPosition, future.indexOfPosition(e.position, job.ranks()));
                daemon.follow(this, planned, blockPosition, false);
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
            e.lastReportNanos = System.nanoTime();
            for (double w : waitsMillis) {
                long micros = Math.max(0, Math.round(w * 1000));
                e.waits.recordValue(Math.min(micros, e.waits.getHighestTrackableValue()));
                e.waitTotalMicros += micros;
                daemon.history().recordWait(micros);
            }
            daemon.history().recordSamples(samples);
        }
        int perStep = waitsMillis.length == 0 ? 0 : (int) (samples / waitsMillis.length);
        for (double w : waitsMillis) {
            daemon.stepMetrics(epoch, perStep, Math.round(w * 1e6));
        }
        wake();
    }

    private void wake() {
        synchronized (signal) {
            signal.notifyAll();
        }
    }

    void stop() {
        stopped = true;
        prefetcher.interrupt();
    }

    private void prefetchLoop() {
        Semaphore slots = new Semaphore(Daemon.prefetchThreads());
        long window = Math.max(1, daemon.config().prefetchBytes() / daemon.config().blockSize());
        try {
            while (!stopped) {
                Job.PlannedBlock next = null;
                synchronized (this) {
                    cursor = (int) Math.max(cursor, blockPosition);
                    if (cursor < future.blocks().size() && cursor < blockPosition + window) {
                        next = future.blocks().get(cursor++);
                    }
                }
                if (next == null) {
                    synchronized (signal) {
                        signal.wait(200);
                    }
                    continue;
                }
                slots.acquire();
                if (!daemon.prefetch(next.block(), next.objectSize(), slots)) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
