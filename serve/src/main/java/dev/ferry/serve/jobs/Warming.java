package dev.ferry.serve.jobs;

import dev.ferry.cache.CachingStore;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.Shard;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * One {@code ferry warm}: the objects of a prefix (listed) or of a manifest loaded into the local tier before a job
 * starts, as the plan's prefetcher loads blocks: through the tier's own prefetch (a block already resident or being
 * fetched is not fetched again, so warming twice costs nothing the second time, and a warm cut short resumes where
 * it stopped), several objects at a time. It stops adding objects at nine tenths of the tier's capacity (the rest
 * would evict the first): those are counted as not fitting. A warm of a group's member may keep only the objects the
 * member owns ({@code ferry warm --group} asks every member so): the others are counted as another member's.
 * Progress is read while it runs. Thread-safe.
 */
final class Warming {
    /** Objects fetched at a time (the governor still keeps each prefix under the store's limit). */
    static final int PARALLEL = 32;

    final String id;
    final String source;
    private final Clock clock;
    private final long startNanos;
    private final AtomicLong objectsTotal = new AtomicLong();
    private final AtomicLong bytesTotal = new AtomicLong();
    private final AtomicLong objectsDone = new AtomicLong();
    private final AtomicLong bytesDone = new AtomicLong();
    private final AtomicLong bytesFetched = new AtomicLong();
    private final AtomicLong objectsSkipped = new AtomicLong();
    private final AtomicLong bytesSkipped = new AtomicLong();
    private final AtomicLong objectsElsewhere = new AtomicLong();
    private final AtomicLong bytesElsewhere = new AtomicLong();
    private final AtomicLong egressAtStart = new AtomicLong();
    private final AtomicReference<String> error = new AtomicReference<>();
    private volatile boolean listed;
    private volatile boolean done;
    private volatile long endNanos;

    private final Predicate<ObjectKey> mine;

    /**
     * {@code meter}: the origin's, whose egress from now on the progress reports; {@code mine}: the objects this warm
     * loads (the others belong to another member of the group).
     */
    Warming(String id, String source, Clock clock, MeteredStore meter, Predicate<ObjectKey> mine) {
        this.id = id;
        this.source = source;
        this.mine = mine;
        this.clock = clock;
        this.startNanos = clock.nanoTime();
        this.egressAtStart.set(meter.snapshot().egressBytes()); // before the thread that warms starts: the reply reads it at once
    }

    /**
     * Where it stands. {@code egressBytes}: the origin's egress since it began (anything else reading meanwhile
     * included); the totals count this warm's objects, not those left to other members ({@code objectsElsewhere}).
     */
    record Progress(String id, String source, boolean listed, boolean done, String error, long objectsTotal, long bytesTotal,
            long objectsDone, long bytesDone, long bytesFetched, long objectsSkipped, long bytesSkipped, long objectsElsewhere,
            long bytesElsewhere, double seconds, long egressBytes) {
    }

    Progress progress(MeteredStore meter) {
        long end = done ? endNanos : clock.nanoTime();
        return new Progress(id, source, listed, done, error.get(), objectsTotal.get(), bytesTotal.get(), objectsDone.get(),
                bytesDone.get(), bytesFetched.get(), objectsSkipped.get(), bytesSkipped.get(), objectsElsewhere.get(),
                bytesElsewhere.get(), (end - startNanos) / 1e9,
                meter.snapshot().egressBytes() - egressAtStart.get());
    }

    /** Warms the objects under {@code bucket}/{@code prefix}, listed page by page through {@code lister}. */
    void prefix(ObjectStore lister, CachingStore tier, String bucket, String prefix) {
        run(tier, true, () -> {
            List<ObjectMeta> objects = new ArrayList<>();
            String token = null;
            do {
                ListPage page = lister.list(new ListRequest(bucket, prefix, null, token, 1000));
                for (ObjectMeta m : page.objects()) {
                    if (keep(m)) {
                        objects.add(m);
                    }
                }
                token = page.nextToken();
            } while (token != null);
            return objects;
        });
    }

    /** Warms every shard of {@code manifest}, at the versions it names. */
    void manifest(CachingStore tier, Manifest manifest) {
        run(tier, false, () -> {
            List<ObjectMeta> objects = new ArrayList<>();
            for (Shard s : manifest.shards()) {
                ObjectMeta m = new ObjectMeta(s.key(), s.size(), s.etag(), null, java.time.Instant.EPOCH);
                if (keep(m)) {
                    objects.add(m);
                }
            }
            return objects;
        });
    }

    /** True for an object this warm loads; another member's is counted as such. */
    private boolean keep(ObjectMeta m) {
        if (mine.test(m.key())) {
            return true;
        }
        objectsElsewhere.incrementAndGet();
        bytesElsewhere.addAndGet(m.size());
        return false;
    }

    private interface Listing {
        List<ObjectMeta> objects() throws IOException;
    }

    /** {@code listedMeta}: the objects' metadata is a listing's, good to remember (a manifest's lacks their dates). */
    private void run(CachingStore tier, boolean listedMeta, Listing listing) {
        try {
            List<ObjectMeta> objects = listing.objects();
            long budget = (long) (tier.config().capacity() * 0.9);
            List<ObjectMeta> fit = new ArrayList<>();
            long planned = 0;
            for (ObjectMeta m : objects) {
                objectsTotal.incrementAndGet();
                bytesTotal.addAndGet(m.size());
                if (planned + m.size() > budget) {
                    objectsSkipped.incrementAndGet();
                    bytesSkipped.addAndGet(m.size());
                } else {
                    planned += m.size();
                    fit.add(m);
                }
            }
            listed = true;
            Semaphore slots = new Semaphore(PARALLEL);
            List<Thread> threads = new ArrayList<>();
            for (ObjectMeta m : fit) {
                slots.acquire();
                if (error.get() != null) {
                    slots.release();
                    break;
                }
                threads.add(Thread.ofVirtual().name("ferry-warm-" + id).start(() -> {
                    try {
                        if (m.size() > 0) {
                            if (listedMeta) {
                                tier.listedIfUnknown(m); // its size and ETag from the listing: no HEAD before the GET
                            }
                            bytesFetched.addAndGet(tier.prefetch(new GetRequest(m.key(), null, m.etag())));
                        }
                        objectsDone.incrementAndGet();
                        bytesDone.addAndGet(m.size());
                    } catch (IOException | RuntimeException e) {
                        error.compareAndSet(null, m.key() + ": " + e.getMessage());
                    } finally {
                        slots.release();
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
        } catch (IOException | RuntimeException e) {
            error.compareAndSet(null, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error.compareAndSet(null, "interrupted");
        } finally {
            endNanos = clock.nanoTime();
            done = true;
        }
    }
}
