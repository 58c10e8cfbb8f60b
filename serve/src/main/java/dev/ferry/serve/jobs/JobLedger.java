package dev.ferry.serve.jobs;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.TierLedger;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The node's local tier tells this where each read's bytes came from and each block it fetched; it charges each to
 * the epoch of the registered job whose plan reads that block. A read, or a fetch, of a block the epoch in progress
 * plans is that epoch's; a fetch of a block only a job's next epoch plans (prefetched ahead) is charged to its epoch
 * in progress, and counted apart as fetched ahead. Each read and each fetch is charged once: the per-job rows add up
 * to no more than the daemon's egress, and what no plan asked for (listings, metadata, manifests, reads no
 * registered plan names) is the daemon's own, shown beside them.
 *
 * <p>A block several jobs plan now cannot be told apart by its request (an S3 GET names no job): it is charged to
 * the job furthest behind in its reads for the position its consumers reported, never to one whose consumers finished
 * the epoch while another plans it. Two jobs reading one corpus are so charged about their own reads each; where a
 * block came from is the same for both.
 *
 * <p>Thread-safe: the jobs are a copy-on-write list, each job's plan sets are published whole.
 */
final class JobLedger implements TierLedger {
    private final List<RunningJob> jobs = new CopyOnWriteArrayList<>();

    void add(RunningJob run) {
        jobs.add(run);
    }

    void remove(RunningJob run) {
        jobs.remove(run);
    }

    @Override
    public void served(BlockId block, long bytes, long arrivedNanos, boolean first) {
        RunningJob.Charges to = readerOf(block);
        if (to != null) {
            to.epoch().reads.served(bytes, arrivedNanos, first, to.epoch().startNanos);
        }
    }

    @Override
    public void fetched(BlockId block, long bytes, boolean prefetch, boolean request) {
        RunningJob.Charges to = readerOf(block);
        if (to != null) {
            to.epoch().charge(bytes, request, false);
            return;
        }
        for (RunningJob run : jobs) {
            RunningJob.Charges c = run.charges();
            if (c != null && c.next().contains(block)) {
                c.epoch().charge(bytes, request, true);
                return;
            }
        }
    }

    /**
     * The epoch that reads {@code block} now: of the jobs whose epoch in progress plans it, one whose consumers have
     * not finished the epoch, the furthest behind (null: none plans it).
     */
    private RunningJob.Charges readerOf(BlockId block) {
        RunningJob.Charges to = null;
        double behind = Double.NEGATIVE_INFINITY;
        for (RunningJob run : jobs) {
            RunningJob.Charges c = run.charges();
            if (c != null && c.now().contains(block)) {
                double b = c.done() ? Double.NEGATIVE_INFINITY : c.behind();
                if (to == null || b > behind) {
                    to = c;
                    behind = b;
                }
            }
        }
        return to;
    }
}
