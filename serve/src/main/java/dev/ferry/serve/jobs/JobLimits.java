package dev.ferry.serve.jobs;

import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.plan.World;
import dev.ferry.serve.protocol.S3Error;
import java.util.Locale;

/**
 * What one job registration may cost the daemon. A registered plan keeps each epoch's order (a few int
 * arrays over the samples), who reads each position (a long per sample read, with canonical nodes) and its
 * block futures (one entry per block each sample read touches, this epoch's and the next one's) in memory,
 * and computes them, and a prediction of three epochs, when the job registers and as each epoch starts; so
 * the cost of a registration follows three counts, each bounded here before anything is built:
 * <ul>
 *   <li>the samples of the manifest;
 *   <li>the sample reads per epoch: with padding every rank reads as many samples, so a world of more ranks
 *       than samples reads some samples more than once (a world of 409,600,000 ranks reads one sample that
 *       many times);
 *   <li>the block reads per epoch: each sample read touches every block its bytes span.
 * </ul>
 * A manifest that declares a few billion samples, a shard of 10 TB or a world of millions of ranks would
 * take the heap and the CPU of every other client. Such a registration is refused with a 400 that names the
 * bound it passed. Every sum is checked before it is formed, so no size (up to 2^63 - 1 bytes) or count can
 * overflow past a bound. Stateless.
 */
final class JobLimits {
    /** Samples per epoch, and sample reads per epoch (the samples padded to a multiple of the ranks). */
    static final long MAX_SAMPLES = 1L << 21;
    /**
     * Block reads a plan may name per epoch (a sample read spanning k blocks counts k). The costliest plan is
     * one of distinct blocks (one huge shard): at this bound (2.07 million, an 8.7 TB shard of 4 MiB blocks)
     * a daemon run with -Xmx768m planned it and one with -Xmx512m did not; it keeps about 340 MB while
     * registered. A plan of 3.8 million did not fit in -Xmx1g.
     */
    static final long MAX_BLOCK_READS = 1L << 21;
    /** A manifest read from the store (manifest_key) is read whole: at most this size. */
    static final long MAX_MANIFEST_BYTES = 256L << 20;

    private JobLimits() {
    }

    /**
     * Throws a 400 when a plan of {@code manifest} over {@code world} passes a bound, for a daemon with
     * {@code blockSize} blocks; {@code uneven} says whether the samples are padded to a multiple of the ranks.
     */
    static void check(Manifest manifest, World world, PlanConfig.Uneven uneven, int blockSize) throws S3Error {
        long samples = 0;
        long blockReads = 0;
        long widest = 1; // the most blocks one sample can span: its whole shard
        for (Shard s : manifest.shards()) {
            samples += s.samples(); // at most MAX_SAMPLES + 2^31: no overflow
            if (samples > MAX_SAMPLES) {
                throw S3Error.badRequest("InvalidArgument", String.format(Locale.ROOT,
                        "the manifest declares more than %,d samples per epoch (%,d so far, at %s): a job may have at most %,d; "
                                + "register the dataset as several jobs", MAX_SAMPLES, samples, s.key(), MAX_SAMPLES));
            }
            long blocks = Math.ceilDiv(s.size(), blockSize);
            widest = Math.max(widest, blocks);
            // each sample touches at least one block; together the samples of a shard touch every block once more at most
            if (blocks > MAX_BLOCK_READS - blockReads - s.samples()) {
                throw S3Error.badRequest("InvalidArgument", String.format(Locale.ROOT,
                        "the manifest's samples span more than %,d block reads of %,d bytes per epoch (at %s, %,d bytes): a job may "
                                + "plan at most %,d", MAX_BLOCK_READS, blockSize, s.key(), s.size(), MAX_BLOCK_READS));
            }
            blockReads += s.samples() + blocks;
        }
        long ranks = world.ranks();
        long steps = uneven == PlanConfig.Uneven.PAD ? Math.ceilDiv(samples, ranks) : samples / ranks;
        long reads = steps * ranks; // under samples + ranks: no overflow
        if (reads > MAX_SAMPLES) {
            throw S3Error.badRequest("InvalidArgument", String.format(Locale.ROOT,
                    "a world of %,d ranks (%,d nodes x %,d ranks per node) reads %,d samples per epoch (the manifest's %,d, padded so "
                            + "that every rank reads as many): a job may plan at most %,d sample reads per epoch; use fewer ranks",
                    ranks, world.nodes(), world.ranksPerNode(), reads, samples, MAX_SAMPLES));
        }
        // a padded read repeats a sample from the start of the order: count it as the widest sample could be
        long padded = reads - samples;
        if (padded > 0 && padded > (MAX_BLOCK_READS - blockReads) / widest) {
            throw S3Error.badRequest("InvalidArgument", String.format(Locale.ROOT,
                    "a world of %,d ranks reads %,d samples again (padding), each up to %,d blocks of %,d bytes: with the manifest's "
                            + "%,d that may pass %,d block reads per epoch, which a job may plan at most; use fewer ranks",
                    ranks, padded, widest, blockSize, blockReads, MAX_BLOCK_READS));
        }
    }
}
