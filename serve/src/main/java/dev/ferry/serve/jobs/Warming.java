package dev.ferry.serve.jobs;

import dev.ferry.cache.BlockId;
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
import java.util.LinkedHashSet;
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
    private final String unit;
    private final Predicate<ObjectKey> mine;
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

    /**
     * {@code unit}: what it counts (objects, or blocks of a job's epoch); {@code meter}: the origin's, whose egress
     * from now on the progress reports; {@code mine}: the objects this warm loads (the others belong to another
     * member of the group).
     */
    Warming(String id, String source, String unit, Clock clock, MeteredStore meter, Predicate<ObjectKey> mine) {
        this.id = id;
        this.source = source;
        this.unit = unit;
        this.mine = mine;
        this.clock = clock;
        this.startNanos = clock.nanoTime();
        this.egressAtStart.set(meter.snapshot().egressBytes()); // before the thread that warms starts: the reply reads it at once
    }

    /**
     * Where it stands. {@code egressBytes}: the origin's egress since it began (anything else reading meanwhile
     * included); the totals count this warm's objects (or blocks, as {@code unit} says), not those left to other
     * members ({@code objectsElsewhere}).
     */
    record Progress(String id, String source, String unit, boolean listed, boolean done, String error, long objectsTotal, long bytesTotal,
            long objectsDone, long bytesDone, long bytesFetched, long objectsSkipped, long bytesSkipped, long objectsElsewhere,
            long bytesElsewhere, double seconds, long egressBytes) {
    }

    Progress progress(MeteredStore meter) {
        long end = done ? endNanos : clock.nanoTime();
        return new Progress(id, source, unit, listed, done, error.get(), objectsTotal.get(), bytesTotal.get(), objectsDone.get(),
                bytesDone.get(), bytesFetched.get(), objectsSkipped.get(), bytesSkipped.get(), objectsElsewhere.get(),
                bytesElsewhere.get(), (end - startNanos) / 1e9,
                meter.snapshot().egressBytes() - egressAtStart.get());
    }

    /** Warms the objects under {@code bucket}/{@code prefix}, listed page by page through {@code lister}. */
    void prefix(ObjectStore lister, CachingStore tier, String bucket, String prefix) {
        run(tier, () -> {
            List<Item> items = new ArrayList<>();
            String token = null;
            do {
                ListPage page = lister.list(new ListRequest(bucket, prefix, null, token, 1000));
                for (ObjectMeta m : page.objects()) {
                    if (keep(m.key(), m.size())) {
                        items.add(new Item(m.key().toString(), m.size(), () -> {
                            tier.listedIfUnknown(m); // its size and ETag from the listing: no HEAD before the GET
                            return tier.prefetch(new GetRequest(m.key(), null, m.etag()));
                        }));
                    }
                }
                token = page.nextToken();
            } while (token != null);
            return items;
        });
    }

    /** Warms every shard of {@code manifest}, at the versions it names. */
    void manifest(CachingStore tier, Manifest manifest) {
        run(tier, () -> {
            List<Item> items = new ArrayList<>();
            for (Shard s : manifest.shards()) {
                ObjectMeta m = new ObjectMeta(s.key(), s.size(), s.etag(), null, java.time.Instant.EPOCH);
                if (keep(m.key(), m.size())) {
                    items.add(new Item(m.key().toString(), m.size(), () -> tier.prefetch(new GetRequest(m.key(), null, m.etag()))));
                }
            }
            return items;
        });
    }

    /**
     * Warms {@code blocks} (a job's epoch on this node, in the order it reads them, each once): the first steps first,
     * so a plan larger than the tier warms its beginning. Counted in blocks of the tier's size.
     */
    void blocks(CachingStore tier, List<BlockId> blocks) {
        long size = tier.config().blockSize();
        run(tier, () -> {
            List<Item> items = new ArrayList<>();
            for (BlockId b : new LinkedHashSet<>(blocks)) {
                if (keep(b.key(), size)) {
                    items.add(new Item(b.key() + " block " + b.index(), size, () -> tier.prefetch(b)));
                }
            }
            return items;
        });
    }

    /** True for an object (or block) of {@code key} this warm loads; another member's is counted as such. */
    private boolean keep(ObjectKey key, long size) {
        if (mine.test(key)) {
            return true;
        }
        objectsElsewhere.incrementAndGet();
        bytesElsewhere.addAndGet(size);
        return false;
    }

    /** One thing to load: what it is (for an error), its size, and the fetch that loads it (the bytes it fetched). */
    private record Item(String name, long size, Fetch fetch) {
    }

    private interface Fetch {
        long run() throws IOException;
    }

    private interface Listing {
        List<Item> items() throws IOException;
    }

    private void run(CachingStore tier, Listing listing) {
        try {
            List<Item> items = listing.items();
            long budget = (long) (tier.config().capacity() * 0.9);
            List<Item> fit = new ArrayList<>();
            long planned = 0;
            for (Item m : items) {
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
            for (Item m : fit) {
                slots.acquire();
                if (error.get() != null) {
                    slots.release();
                    break;
                }
                threads.add(Thread.ofVirtual().name("ferry-warm-" + id).start(() -> {
                    try {
                        if (m.size() > 0) {
                            bytesFetched.addAndGet(m.fetch().run());
                        }
                        objectsDone.incrementAndGet();
                        bytesDone.addAndGet(m.size());
                    } catch (IOException | RuntimeException e) {
                        error.compareAndSet(null, m.name() + ": " + e.getMessage());
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
