package dev.ferry.serve.jobs;

import dev.ferry.plan.Manifest;
import dev.ferry.plan.Shard;
import dev.ferry.serve.protocol.S3Error;
import java.util.Locale;

/**
 * What one job registration may cost the daemon. A registered plan keeps each epoch's order (a few int
 * arrays over the samples) and its block futures (one entry per block each sample touches, this epoch's and
 * the next one's) in memory, and computes them when the job registers and as each epoch starts; a manifest
 * that declares a few billion samples, or one shard of 10 TB, would take the heap and the CPU of every
 * other client. Such a registration is refused with a 400 that says which bound it passed. Stateless.
 */
final class JobLimits {
    /** Samples per epoch: about 40 bytes each across the plans kept, so 4 Mi samples cost some 170 MB. */
    static final long MAX_SAMPLES = 1L << 22;
    /** Block reads a plan may name per epoch (a sample spanning k blocks counts k): about 100 bytes each in the futures. */
    static final long MAX_BLOCK_READS = 1L << 23;
    /** A manifest read from the store (manifest_key) is read whole: at most this size. */
    static final long MAX_MANIFEST_BYTES = 256L << 20;

    private JobLimits() {
    }

    /** Throws a 400 when the manifest passes a bound for a daemon with {@code blockSize} blocks. */
    static void check(Manifest manifest, int blockSize) throws S3Error {
        long samples = 0;
        long blockReads = 0;
        for (Shard s : manifest.shards()) {
            samples += s.samples();
            // each sample touches at least one block; together the samples of a shard touch every block once more at most
            blockReads += s.samples() + (s.size() + blockSize - 1) / blockSize;
            if (samples > MAX_SAMPLES) {
                throw S3Error.badRequest("InvalidArgument", String.format(Locale.ROOT,
                        "the manifest declares more than %,d samples per epoch (%,d so far, at %s): a job may have at most %,d; "
                                + "register the dataset as several jobs", MAX_SAMPLES, samples, s.key(), MAX_SAMPLES));
            }
            if (blockReads > MAX_BLOCK_READS) {
                throw S3Error.badRequest("InvalidArgument", String.format(Locale.ROOT,
                        "the manifest's samples span more than %,d block reads of %,d bytes per epoch (at %s, %,d bytes): a job may "
                                + "plan at most %,d", MAX_BLOCK_READS, blockSize, s.key(), s.size(), MAX_BLOCK_READS));
            }
        }
    }
}
