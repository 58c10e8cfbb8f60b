package dev.ferry.writeback;

import dev.ferry.store.GetRequest;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/**
 * Node-local scratch: one bucket kept in a folder on local disk ({@link FileObjectStore}: written to a
 * temporary name and renamed), never uploaded, within a quota of bytes, each object living {@code ttl}
 * after it was written. A write past the quota is refused ({@code 507 InsufficientStorage}); an expired
 * object is gone for reads at once and its file deleted on the next read, list or {@link #sweep}. Used by
 * {@link WriteBackStore} (its {@code scratchBucket}) and by the daemon ({@code scratch-bucket}).
 *
 * <p>Multipart uploads are not taken: it has no {@link dev.ferry.store.MultipartOperations} (a scratch object is
 * PUT whole). Thread-safe.
 */
public final class Scratch implements ObjectStore {
    /** What status shows: the bytes and objects held (exact after a sweep), writes refused, objects expired. */
    public record Stats(String bucket, long quotaBytes, long usedBytes, long objects, Duration ttl, long refusedWrites, long expired) {
    }

    private final FileObjectStore store;
    private final String bucket;
    private final long quota;
    private final Duration ttl;
    private final Clock clock;
    private final Object lock = new Object();
    /** Bytes and objects held, or more: lowered by deletes, made exact by a sweep. */
    private long bytes;
    private long objects;
    private final LongAdder refused = new LongAdder();
    private final LongAdder expired = new LongAdder();

    /** Scratch bucket {@code bucket} under folder {@code root} (as {@code root/bucket/...}); what is there is kept. */
    public Scratch(Path root, String bucket, long quota, Duration ttl) throws IOException {
        this(root, bucket, quota, ttl, Clock.system());
    }

    /** The same, its objects expiring by {@code clock}'s wall time. */
    public Scratch(Path root, String bucket, long quota, Duration ttl, Clock clock) throws IOException {
        ObjectKey.validateBucket(bucket);
        if (quota < 1 || ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("scratch quota and ttl must be positive: " + quota + ", " + ttl);
        }
        this.store = new FileObjectStore(root);
        this.bucket = bucket;
        this.quota = quota;
        this.ttl = ttl;
        this.clock = Objects.requireNonNull(clock, "clock is null");
        store.createBucket(bucket);
        sweep();
    }

    public String bucket() {
        return bucket;
    }

    /** True for the scratch bucket's name. */
    public boolean holds(String name) {
        return bucket.equals(name);
    }

    private boolean isExpired(ObjectMeta m) {
        return m.lastModified().isBefore(clock.now().minus(ttl));
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        synchronized (lock) {
            ObjectMeta old = existing(key);
            long replaced = old == null ? 0 : old.size();
            if (bytes - replaced + body.length() > quota) {
                // the count may overstate (expiries do not lower it): sweep only when it says the write will not fit
                sweep();
            }
            if (bytes - replaced + body.length() > quota) {
                refused.increment();
                throw new StoreException(StoreException.Kind.FATAL, 507, "scratch quota of " + quota + " bytes is full; " + key + " ("
                        + body.length() + " bytes) was not written", null);
            }
            ObjectMeta meta = store.put(key, body);
            bytes += meta.size() - replaced;
            objects += old == null ? 1 : 0;
            return meta;
        }
    }

    private ObjectMeta existing(ObjectKey key) {
        try {
            return store.head(key);
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        ObjectMeta m = store.head(key);
        if (isExpired(m)) {
            expire(m);
            throw ObjectNotFoundException.of(key);
        }
        return m;
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        head(request.key()); // an expired object is gone
        return store.get(request);
    }

    @Override
    public ListPage list(ListRequest request) throws IOException {
        ListPage page = store.list(request);
        return new ListPage(page.objects().stream().filter(m -> !isExpired(m)).toList(), page.commonPrefixes(), page.nextToken());
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        synchronized (lock) {
            ObjectMeta old = existing(key);
            store.delete(key);
            if (old != null) {
                bytes -= old.size();
                objects--;
            }
        }
    }

    private void expire(ObjectMeta m) throws IOException {
        synchronized (lock) {
            ObjectMeta now = existing(m.key());
            if (now != null && isExpired(now)) {
                store.delete(m.key());
                bytes -= now.size();
                objects--;
                expired.increment();
            }
        }
    }

    /** Deletes the expired objects and recounts the live ones; returns their bytes. */
    public long sweep() throws IOException {
        synchronized (lock) {
            long live = 0;
            long count = 0;
            ListRequest request = ListRequest.of(bucket, "");
            while (true) {
                ListPage page = store.list(request);
                for (ObjectMeta m : page.objects()) {
                    if (isExpired(m)) {
                        store.delete(m.key());
                        expired.increment();
                    } else {
                        live += m.size();
                        count++;
                    }
                }
                if (!page.isTruncated()) {
                    break;
                }
                request = request.withContinuationToken(page.nextToken());
            }
            bytes = live;
            objects = count;
            return live;
        }
    }

    public Stats stats() {
        synchronized (lock) {
            return new Stats(bucket, quota, bytes, objects, ttl, refused.sum(), expired.sum());
        }
    }

    @Override
    public void close() throws IOException {
        store.close();
    }
}
