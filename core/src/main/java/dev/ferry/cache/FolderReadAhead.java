package dev.ferry.cache;

import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectMeta;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Read-ahead of a folder of small objects, for readers without a plan. A dataset of one object per sample (an image
 * folder, a folder of 20 KiB records) is read in an order ferry is not told, one object at a time per reader, and
 * each cold object waits for the store's first byte. Once readers have missed enough objects of one folder,
 * all of them within one block, the folder's other objects of one block are fetched into the tier ahead of them,
 * {@link #CONCURRENCY} at once in the whole process, each as a reader's miss of it would be (one GET of the whole
 * object asking for its checksum, pinned to the ETag the listing named; {@link CachingStore#prefetchListed}), but
 * counted as prefetched: a shuffled epoch over the folder then finds most of it there.
 *
 * <p>When: at {@link #FIRST_MISSES} misses the folder is listed (one LIST page for up to 1,000 names, at most
 * {@link #MAX_NAMES} names); it is read ahead once its misses reach 1 in {@link #SHARE} of the objects listed (and at
 * least {@link #FIRST_MISSES}): a reader that looks at a few objects of a large folder costs a LIST page, not the
 * folder. What bounds it: a folder is read ahead once while it is tracked ({@link #TRACKED_FOLDERS}, least recently
 * missed dropped first); the listings waiting for enough misses hold {@link #HELD_NAMES} names at most (past it a
 * folder is not read ahead while tracked); the bytes it fetches are at most a quarter of the tier's capacity, so a folder larger than
 * that is fetched in part rather than evicting what it fetched before it is read; objects of more than one block are
 * left to the sequential read-ahead. The daemon reads no folder ahead while a job with a plan is registered, nor in a
 * regional group: the plan (and its node partitions) and the group's owners decide what a node fetches (a folder read
 * ahead on every node would fetch every node's share of it).
 *
 * <p>Thread-safe.
 */
final class FolderReadAhead {
    private static final Logger LOG = LoggerFactory.getLogger(FolderReadAhead.class);
    /** ColdReads in a folder before it is listed, and at least before it is read ahead. */
    static final int FIRST_MISSES = 4;
    /** A folder is read ahead once its misses reach 1 in this many of its objects. */
    static final int SHARE = 32;
    /** Names of a folder listed, at most (10 pages). */
    static final int MAX_NAMES = 10 * ListRequest.DEFAULT_MAX_KEYS;
    /** Objects fetched ahead at once, in the whole process. */
    static final int CONCURRENCY = 8;
    /** Folders whose misses are counted, at most. */
    static final int TRACKED_FOLDERS = 1024;

    /** Names of listed folders held while their misses are not yet enough, at most, in all folders together. */
    static final int HELD_NAMES = 100_000;

    private static final class Folder {
        int misses;
        boolean listing;
        boolean done;
        List<ObjectMeta> small; // once listed, until read ahead: its objects of at most a block
    }

    private final CachingStore cache;
    private final Executor executor;
    private final BooleanSupplier paused;
    private final Semaphore permits = new Semaphore(CONCURRENCY);
    /** By "bucket/prefix", least recently missed first; guarded by itself. */
    private final LinkedHashMap<String, Folder> folders = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Folder> eldest) {
            if (size() <= TRACKED_FOLDERS) {
                return false;
            }
            release(eldest.getValue());
            return true;
        }
    };
    /** Names in the held listings ({@link #HELD_NAMES}). */
    private final AtomicLong held = new AtomicLong();
    private final LongAdder foldersReadAhead = new LongAdder();
    private final LongAdder scheduled = new LongAdder();

    /** Reads folders of {@code cache} ahead on {@code executor}, none while {@code paused} says so. */
    FolderReadAhead(CachingStore cache, Executor executor, BooleanSupplier paused) {
        this.cache = cache;
        this.executor = executor;
        this.paused = paused;
    }

    /** Folders read ahead so far. */
    long folders() {
        return foldersReadAhead.sum();
    }

    /** Objects handed to the executor so far. */
    long scheduledObjects() {
        return scheduled.sum();
    }

    /** A reader's read of {@code meta} from block {@code firstIndex} went to the store. */
    void onMiss(ObjectMeta meta, long firstIndex) {
        if (firstIndex != 0 || meta.size() == 0 || meta.size() > cache.config().blockSize() || paused.getAsBoolean()) {
            return;
        }
        String prefix = MetadataCache.prefixOf(meta.key());
        Folder f;
        synchronized (folders) {
            f = folders.computeIfAbsent(MetadataCache.folderOf(meta.key()), x -> new Folder());
        }
        boolean list = false;
        boolean fetch = false;
        synchronized (f) {
            if (f.done) {
                return;
            }
            f.misses++;
            if (f.small == null && !f.listing && f.misses >= FIRST_MISSES) {
                f.listing = true;
                list = true;
            } else if (f.small != null && due(f.misses, f.small.size())) {
                fetch = true;
            }
        }
        if (list) {
            run(() -> list(meta.key().bucket(), prefix, f));
        } else if (fetch) {
            List<ObjectMeta> small = release(f);
            if (small != null) {
                run(() -> fetch(small));
            }
        }
    }

    private static boolean due(int misses, int objects) {
        return misses >= Math.max(FIRST_MISSES, objects / SHARE);
    }

    /** Marks {@code f} read ahead (or given up) and lets go of its held listing: what it held, or null. */
    private List<ObjectMeta> release(Folder f) {
        synchronized (f) {
            f.done = true;
            List<ObjectMeta> small = f.small;
            f.small = null;
            if (small != null) {
                held.addAndGet(-small.size());
            }
            return small;
        }
    }

    private void run(Runnable work) {
        try {
            executor.execute(work);
        } catch (RejectedExecutionException closing) {
            // the process is closing: nothing more is read ahead
        }
    }

    private void list(String bucket, String prefix, Folder f) {
        List<ObjectMeta> small = new ArrayList<>();
        long blockSize = cache.config().blockSize();
        try {
            ListRequest request = new ListRequest(bucket, prefix, "/", null, ListRequest.DEFAULT_MAX_KEYS);
            for (int names = 0; names < MAX_NAMES; ) {
                ListPage page = cache.list(request);
                names += page.objects().size() + page.commonPrefixes().size();
                for (ObjectMeta m : page.objects()) {
                    if (m.size() > 0 && m.size() <= blockSize) {
                        small.add(m);
                    }
                }
                if (!page.isTruncated()) {
                    break;
                }
                request = request.withContinuationToken(page.nextToken());
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("listing {}{} to read it ahead failed: {}", bucket, prefix, e.toString());
            synchronized (f) {
                f.done = true; // not read ahead while tracked
            }
            return;
        }
        synchronized (f) {
            if (f.done) {
                return; // dropped from tracking while it was listed
            }
            if (!due(f.misses, small.size())) {
                if (held.addAndGet(small.size()) <= HELD_NAMES) {
                    f.small = small; // until its misses are enough
                    return;
                }
                held.addAndGet(-small.size()); // too many names held already: not read ahead while tracked
                f.done = true;
                return;
            }
            f.done = true;
        }
        fetch(small);
    }

    private void fetch(List<ObjectMeta> small) {
        foldersReadAhead.increment();
        long budget = cache.config().capacity() / 4;
        for (ObjectMeta m : small) {
            if (cache.residentOrInFlight(new BlockId(m.key(), m.etag(), 0))) {
                continue;
            }
            budget -= m.size();
            if (budget < 0) {
                return;
            }
            try {
                permits.acquire();
            } catch (InterruptedException closing) {
                Thread.currentThread().interrupt();
                return;
            }
            try {
                scheduled.increment();
                executor.execute(() -> prefetch(m));
            } catch (RejectedExecutionException closing) {
                permits.release();
                return;
            }
        }
    }

    private void prefetch(ObjectMeta listed) {
        try {
            cache.prefetchListed(listed);
        } catch (IOException | RuntimeException e) {
            LOG.debug("reading {} ahead failed: {}", listed.key(), e.toString());
        } finally {
            permits.release();
        }
    }
}
