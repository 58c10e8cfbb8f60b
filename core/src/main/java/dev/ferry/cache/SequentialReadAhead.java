package dev.ferry.cache;

import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectMeta;
import java.io.IOException;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Read-ahead for readers without a plan (awscli, boto3's {@code download_file}, any reader of a large object
 * front to back): the local tier tells it every block a read asks for; a {@link SequentialDetector} finds
 * the sequential readers, and the blocks ahead of them are fetched into the tier with one ranged GET each,
 * in parallel on {@code executor}, through {@link CachingStore#prefetch} (single flight, the policy's
 * admission, counted as prefetched). Bytes being fetched ahead are bounded by one budget per process
 * ({@code budgetBytes}); a block that does not fit is left for later (or for the reader).
 *
 * <p>Settings ({@link Config}), defaults in brackets: {@code minStreak} [2] reads moving forward before
 * reading ahead; {@code window} [16] blocks a read may start from the furthest block read and still count as
 * sequential; {@code blocksAhead} [16] blocks kept ahead of the furthest block read (64 MiB of 4 MiB blocks);
 * {@code budgetBytes} [256 MiB] fetched ahead at once, in the whole process; {@code trackedObjects} [4096];
 * {@code wholeBlocks} [0: off] objects of at most this many blocks are fetched whole at their first read, in
 * parallel (the mount sets it to {@code blocksAhead}: a small file is read whole by nearly every reader);
 * {@code folders} [on] a folder whose objects of one block readers keep missing has the others fetched ahead
 * ({@link FolderReadAhead}). A read of an object's last block before its body (a footer) does not spoil the
 * sequential reader that follows; see {@link SequentialDetector}.
 *
 * <p>Thread-safe.
 */
public final class SequentialReadAhead implements ReadObserver {
    private static final Logger LOG = LoggerFactory.getLogger(SequentialReadAhead.class);

    /** Settings; see the class comment. */
    public record Config(int minStreak, int window, int blocksAhead, long budgetBytes, int trackedObjects, int wholeBlocks,
            boolean folders) {
        public static final Config DEFAULT = new Config(2, 16, 16, 256L << 20, 4096, 0, true);

        /** Settings that fetch no object whole at its first read, and read no folder ahead. */
        public Config(int minStreak, int window, int blocksAhead, long budgetBytes, int trackedObjects) {
            this(minStreak, window, blocksAhead, budgetBytes, trackedObjects, 0, false);
        }

        /** These settings, reading folders ahead or not. */
        public Config withFolders(boolean on) {
            return new Config(minStreak, window, blocksAhead, budgetBytes, trackedObjects, wholeBlocks, on);
        }

        public Config {
            if (minStreak < 1) {
                throw new IllegalArgumentException("minStreak must be positive: " + minStreak);
            }
            if (window < 0) {
                throw new IllegalArgumentException("window is negative: " + window);
            }
            if (blocksAhead < 1) {
                throw new IllegalArgumentException("blocksAhead must be positive: " + blocksAhead);
            }
            if (budgetBytes < 1) {
                throw new IllegalArgumentException("budgetBytes must be positive: " + budgetBytes);
            }
            if (trackedObjects < 1) {
                throw new IllegalArgumentException("trackedObjects must be positive: " + trackedObjects);
            }
            if (wholeBlocks < 0) {
                throw new IllegalArgumentException("wholeBlocks is negative: " + wholeBlocks);
            }
        }
    }

    private final CachingStore cache;
    private final Config config;
    private final Executor executor;
    private final SequentialDetector detector;
    private final FolderReadAhead folders; // null: off
    private final AtomicLong inFlight = new AtomicLong();
    private final LongAdder scheduled = new LongAdder();
    private final LongAdder overBudget = new LongAdder();

    private SequentialReadAhead(CachingStore cache, Config config, Executor executor, BooleanSupplier foldersPaused) {
        this.cache = cache;
        this.config = config;
        this.executor = executor;
        this.detector = new SequentialDetector(config.minStreak(), config.window(), config.blocksAhead(), config.trackedObjects(),
                config.wholeBlocks());
        this.folders = config.folders() ? new FolderReadAhead(cache, executor, foldersPaused) : null;
    }

    /** Reads ahead of the sequential readers of {@code cache}, fetching on {@code executor}. */
    public static SequentialReadAhead attach(CachingStore cache, Config config, Executor executor) {
        return attach(cache, config, executor, () -> false);
    }

    /** {@link #attach(CachingStore, Config, Executor)}, reading no folder ahead while {@code foldersPaused} says so. */
    public static SequentialReadAhead attach(CachingStore cache, Config config, Executor executor, BooleanSupplier foldersPaused) {
        SequentialReadAhead r = new SequentialReadAhead(java.util.Objects.requireNonNull(cache, "cache is null"),
                java.util.Objects.requireNonNull(config, "config is null"), java.util.Objects.requireNonNull(executor, "executor is null"),
                java.util.Objects.requireNonNull(foldersPaused, "foldersPaused is null"));
        cache.observeReads(r);
        return r;
    }

    /** Stops reading ahead (fetches under way finish). */
    public void detach() {
        cache.observeReads(null);
    }

    /** Blocks handed to the executor so far. */
    public long scheduledBlocks() {
        return scheduled.sum();
    }

    /** Blocks due that did not fit the budget. */
    public long overBudgetBlocks() {
        return overBudget.sum();
    }

    /** Folders whose objects were fetched ahead of their readers so far ({@link FolderReadAhead}). */
    public long foldersReadAhead() {
        return folders == null ? 0 : folders.folders();
    }

    /** Objects of those folders handed to the executor so far. */
    public long folderObjectsScheduled() {
        return folders == null ? 0 : folders.scheduledObjects();
    }

    /** Bytes being fetched ahead now. */
    public long inFlightBytes() {
        return inFlight.get();
    }

    @Override
    public void onMiss(ObjectMeta meta, long firstIndex) {
        if (folders != null) {
            folders.onMiss(meta, firstIndex);
        }
    }

    @Override
    public void onRead(ObjectMeta meta, long firstIndex, long lastIndex) {
        int blockSize = cache.config().blockSize();
        long lastBlock = (meta.size() - 1) / blockSize;
        SequentialDetector.Ahead ahead = detector.observe(meta.key(), meta.etag(), firstIndex, lastIndex, lastBlock);
        if (ahead == null) {
            return;
        }
        for (long index = ahead.from(); index <= ahead.to(); index++) {
            if (cache.residentOrInFlight(new BlockId(meta.key(), meta.etag(), index))) {
                continue;
            }
            long start = index * blockSize;
            long length = Math.min(blockSize, meta.size() - start);
            if (!take(length)) {
                overBudget.add(ahead.to() - index + 1);
                detector.giveBack(meta.key(), meta.etag(), index);
                return;
            }
            GetRequest request = new GetRequest(meta.key(), ByteRange.of(start, length), meta.etag());
            try {
                scheduled.increment();
                executor.execute(() -> fetch(request, length));
            } catch (RejectedExecutionException closing) {
                inFlight.addAndGet(-length);
                return;
            }
        }
    }

    private boolean take(long bytes) {
        while (true) {
            long now = inFlight.get();
            if (now + bytes > config.budgetBytes()) {
                return false;
            }
            if (inFlight.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    private void fetch(GetRequest request, long length) {
        try {
            cache.prefetch(request);
        } catch (IOException | RuntimeException e) {
            LOG.debug("read-ahead of {} at {} failed: {}", request.key(), request.range(), e.toString());
        } finally {
            inFlight.addAndGet(-length);
        }
    }
}
