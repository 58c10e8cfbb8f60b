package dev.ferry.cache;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The block files renamed into place without an fsync (read-cache blocks, which can always be fetched again).
 * They must be on disk before the index snapshot says they are: {@link #syncAll} fsyncs them, in parallel,
 * and the cache calls it at close before writing the snapshot. Past {@code backlog} files, the adding thread
 * hands a sync of everything pending to a background thread (one at a time), so the set stays bounded and
 * the fsyncs stay off the read path; by then the kernel has usually written the pages back and an fsync is cheap.
 *
 * <p>Thread-safe.
 */
final class UnsyncedBlocks {
    private static final int SYNC_THREADS = 8;

    /** File to the generation it was added in: a sync removes only the generation it synced. */
    private final ConcurrentHashMap<Path, Long> pending = new ConcurrentHashMap<>();
    private final AtomicLong generations = new AtomicLong();
    private final int backlog;
    private final AtomicBoolean backgroundSync = new AtomicBoolean();

    UnsyncedBlocks(int backlog) {
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog must be positive: " + backlog);
        }
        this.backlog = backlog;
    }

    /** A block file was renamed into place without an fsync. */
    void add(Path file) {
        pending.put(file, generations.incrementAndGet());
        if (pending.size() > backlog && backgroundSync.compareAndSet(false, true)) {
            Thread.ofVirtual().name("ferry-cache-sync").start(() -> {
                try {
                    syncAll();
                } finally {
                    backgroundSync.set(false);
                }
            });
        }
    }

    /** The file was deleted (evicted, stale, corrupt): nothing to sync. */
    void forget(Path file) {
        pending.remove(file);
    }

    int size() {
        return pending.size();
    }

    /**
     * Fsyncs every pending file (a file deleted meanwhile needs nothing). True when all of them are on disk;
     * false when one could not be synced (it stays pending).
     */
    boolean syncAll() {
        List<java.util.Map.Entry<Path, Long>> files = new ArrayList<>(pending.entrySet());
        if (files.isEmpty()) {
            return true;
        }
        boolean ok = true;
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(SYNC_THREADS, files.size()), r -> {
            Thread t = new Thread(r, "ferry-cache-sync");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<Boolean>> work = new ArrayList<>(files.size());
            for (java.util.Map.Entry<Path, Long> entry : files) {
                Path file = entry.getKey();
                long generation = entry.getValue();
                work.add(pool.submit(() -> {
                    try {
                        BlockFile.sync(file);
                    } catch (NoSuchFileException gone) {
                        // evicted meanwhile
                    } catch (IOException e) {
                        return false;
                    }
                    pending.remove(file, generation);
                    return true;
                }));
            }
            for (Future<Boolean> f : work) {
                ok &= f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ok = false;
        } catch (ExecutionException e) {
            ok = false;
        } finally {
            pool.shutdownNow();
        }
        return ok;
    }
}
