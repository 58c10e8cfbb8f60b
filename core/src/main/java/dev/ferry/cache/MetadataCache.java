package dev.ferry.cache;

import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the local tier knows of each object: its metadata as last answered (a HEAD, a miss's ranged GET, a listing,
 * a write through ferry), with when it was asked for. A read goes on with it, asking upstream nothing, while it is
 * fresh (younger than the metadata TTL) or names a version a reader vouches for ({@link #trust}); stale by less
 * than the TTL again, it is served as it is and revalidated in the background (stale-while-revalidate, RFC 5861);
 * older, the read asks upstream itself. So a change made upstream behind ferry's back is seen by every read that
 * starts at least twice the TTL after it; a write through ferry replaces the entry at once.
 *
 * <p><b>A folder at a time.</b> A LIST page names up to 1,000 objects with their ETags and costs what
 * {@value #LIST_PAYS_AT} HEADs cost (S3 Standard: $0.005 against $0.0004 per 1,000). So when a stale entry's folder
 * (its key up to the last {@code /}) holds at least that many known entries, its revalidation lists the folder from
 * the start instead of sending a HEAD, and every known entry a page names with the same ETag is renewed (one named
 * with another ETag takes the listing's metadata, as a HEAD's answer would). Pages go on while each renews at least
 * {@value #LIST_PAYS_AT} entries that were due (older than half the TTL), so a page pays for itself or ends the
 * sweep; a folder is swept at most once per half TTL. An entry a sweep did not renew (gone upstream, or past where
 * the sweep stopped) is revalidated with a HEAD. A shuffled epoch over a folder of small objects then costs one LIST
 * page per 1,000 objects per TTL instead of a HEAD per object.
 *
 * <p>Whenever an answer names a key's version, {@code onVersion} is told it (null: the key is gone), so that the
 * blocks of other versions go.
 *
 * <p>Thread-safe: entries are immutable, in concurrent maps; at most one revalidation per key is in flight.
 */
final class MetadataCache {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataCache.class);
    /** Entries a LIST page must renew to cost no more than the HEADs it saves (12.5 at S3 Standard's prices). */
    static final int LIST_PAYS_AT = 13;

    /** A key's metadata, when it was asked for, and whether it is all a HEAD answers (a LIST's or a ranged GET's names no checksum). */
    private record Entry(ObjectMeta meta, long fetchedAt, boolean whole) {
    }

    private final ObjectStore upstream;
    private final long ttlNanos;
    private final Clock clock;
    private final CacheCounters counters;
    private final Executor revalidators;
    private final BiConsumer<ObjectKey, String> onVersion;
    private final ConcurrentHashMap<ObjectKey, Entry> entries = new ConcurrentHashMap<>();
    /** Keys whose stale metadata is being revalidated in the background: one HEAD per key at a time. */
    private final Set<ObjectKey> revalidating = ConcurrentHashMap.newKeySet();
    /** Known entries per folder ("bucket/prefix/"), for whether listing the folder pays. */
    private final ConcurrentHashMap<String, Integer> perFolder = new ConcurrentHashMap<>();
    /** When each folder's last sweep started (clock nanos); a folder is in {@link #sweeping} while one runs. */
    private final ConcurrentHashMap<String, Long> swept = new ConcurrentHashMap<>();
    private final Set<String> sweeping = ConcurrentHashMap.newKeySet();
    /** Versions readers vouch for ({@link #trust}): per key, each ETag with its number of vouchers. */
    private final ConcurrentHashMap<ObjectKey, Map<String, Integer>> trusted = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * Metadata of {@code upstream}'s objects, trusted for {@code ttl} of {@code clock}'s time and revalidated on
     * {@code revalidators}; each request upstream is counted in {@code counters}.
     */
    MetadataCache(ObjectStore upstream, Duration ttl, Clock clock, CacheCounters counters, Executor revalidators,
            BiConsumer<ObjectKey, String> onVersion) {
        this.upstream = upstream;
        this.ttlNanos = ttl.toNanos();
        this.clock = clock;
        this.counters = counters;
        this.revalidators = revalidators;
        this.onVersion = onVersion;
    }

    /** The key's metadata when it may be used without asking upstream first (see the class comment); null otherwise. */
    ObjectMeta fresh(ObjectKey key) {
        counters.metadataLookups.increment();
        Entry m = entries.get(key);
        return m != null && servable(key, m, clock.nanoTime()) ? m.meta() : null;
    }

    /** The metadata a read may go on with without asking upstream: servable, or the version If-Match names; null otherwise. */
    ObjectMeta usable(ObjectKey key, String ifMatch) {
        counters.metadataLookups.increment();
        Entry m = entries.get(key);
        if (m == null) {
            return null;
        }
        if (ifMatch != null) {
            return ifMatch.equals(m.meta().etag()) ? m.meta() : null;
        }
        return servable(key, m, clock.nanoTime()) ? m.meta() : null;
    }

    /** The metadata held for {@code key} when it is version {@code etag}, however old; null otherwise. */
    ObjectMeta known(ObjectKey key, String etag) {
        counters.metadataLookups.increment();
        Entry m = entries.get(key);
        return m != null && m.meta().etag().equals(etag) ? m.meta() : null;
    }

    /** Fresh, or stale by less than the TTL again: then revalidated in the background, and servable now. */
    private boolean servable(ObjectKey key, Entry m, long now) {
        if (fresh(key, m, now)) {
            return true;
        }
        if (now - m.fetchedAt() - ttlNanos < ttlNanos) {
            revalidate(key, m, true);
            return true;
        }
        return false;
    }

    /** Within the metadata TTL, or a version a reader vouches for: no need to ask upstream. */
    private boolean fresh(ObjectKey key, Entry m, long now) {
        if (now - m.fetchedAt() < ttlNanos) {
            return true;
        }
        Map<String, Integer> etags = trusted.get(key);
        return etags != null && etags.containsKey(m.meta().etag());
    }

    /**
     * Asks upstream for {@code key}'s metadata in the background (one revalidation per key at a time): by sweeping its
     * folder when {@code mayList} and that pays (see the class comment), else, or when the sweep did not renew it,
     * with a HEAD, whose answer becomes the key's metadata unless the entry changed meanwhile (a write through ferry
     * is newer than any answer to a request sent before it). A failure leaves the entry to age past twice the TTL:
     * reads then ask themselves.
     */
    private void revalidate(ObjectKey key, Entry seen, boolean mayList) {
        if (closed || !revalidating.add(key)) {
            return;
        }
        try {
            revalidators.execute(() -> {
                try {
                    if (mayList && !sweep(key)) {
                        return; // the sweep under way may renew it; if not, a later read asks again
                    }
                    if (entries.get(key) != seen) {
                        return; // renewed by a sweep, or changed by a write or an answer since
                    }
                    long sent = clock.nanoTime();
                    counters.upstreamRequests.increment();
                    ObjectMeta now;
                    try {
                        now = upstream.head(key);
                    } catch (ObjectNotFoundException gone) {
                        if (!closed && remove(key, seen)) {
                            onVersion.accept(key, null);
                        }
                        return;
                    }
                    if (!closed && entries.replace(key, seen, new Entry(now, sent, true)) && !now.etag().equals(seen.meta().etag())) {
                        onVersion.accept(key, now.etag());
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.debug("revalidating {} failed ({}); its reads ask upstream once its metadata is twice the TTL old", key, e.toString());
                } finally {
                    revalidating.remove(key);
                }
            });
        } catch (RejectedExecutionException e) {
            revalidating.remove(key);
        }
    }

    /**
     * Sweeps {@code key}'s folder with LIST pages when that pays and it was not swept in the last half TTL. False
     * when a sweep of it is under way already.
     */
    private boolean sweep(ObjectKey key) {
        String folder = folderOf(key);
        Integer known = perFolder.get(folder);
        if (known == null || known < LIST_PAYS_AT) {
            return true;
        }
        if (!sweeping.add(folder)) {
            return false;
        }
        try {
            long start = clock.nanoTime();
            Long last = swept.get(folder);
            if (last != null && start - last < ttlNanos / 2) {
                return true;
            }
            swept.put(folder, start);
            String prefix = prefixOf(key);
            ListRequest page = new ListRequest(key.bucket(), prefix, "/", null, ListRequest.DEFAULT_MAX_KEYS);
            while (!closed) {
                long sent = clock.nanoTime();
                counters.upstreamRequests.increment();
                ListPage listed;
                try {
                    listed = upstream.list(page);
                } catch (IOException e) {
                    LOG.debug("sweeping {} failed ({}); what it did not renew is revalidated one HEAD each", folder, e.toString());
                    break;
                }
                int due = 0;
                for (ObjectMeta m : listed.objects()) {
                    due += renew(m, sent) ? 1 : 0;
                }
                if (!listed.isTruncated() || due < LIST_PAYS_AT) {
                    break;
                }
                page = page.withContinuationToken(listed.nextToken());
            }
            return true;
        } finally {
            sweeping.remove(folder);
        }
    }

    /**
     * A sweep's page named {@code listed}, as of {@code sentAt}: a known entry with its ETag is renewed, one with another
     * ETag takes the listing's metadata. True when the entry was due (older than half the TTL).
     */
    private boolean renew(ObjectMeta listed, long sentAt) {
        Entry m = entries.get(listed.key());
        if (m == null || m.fetchedAt() - sentAt >= 0) {
            return false; // not read through ferry, or answered after the LIST was sent
        }
        boolean same = m.meta().etag().equals(listed.etag());
        Entry renewed = same ? new Entry(m.meta(), sentAt, m.whole()) : new Entry(listed, sentAt, false);
        if (entries.replace(listed.key(), m, renewed) && !same) {
            onVersion.accept(listed.key(), listed.etag());
        }
        return sentAt - m.fetchedAt() >= ttlNanos / 2;
    }

    /** A key's folder: "bucket/" and the key up to its last {@code /}. */
    static String folderOf(ObjectKey key) {
        return key.bucket() + "/" + prefixOf(key);
    }

    /** A key's folder as a listing names it: the key up to its last {@code /} ("" at the bucket's top). */
    static String prefixOf(ObjectKey key) {
        return key.key().substring(0, key.key().lastIndexOf('/') + 1);
    }

    /** Every change of which keys have entries goes through here and {@link #remove}: the per-folder counts follow. */
    private void put(ObjectKey key, Entry e) {
        if (entries.put(key, e) == null) {
            perFolder.merge(folderOf(key), 1, Integer::sum);
        }
    }

    private void remove(ObjectKey key) {
        if (entries.remove(key) != null) {
            counted(key);
        }
    }

    private boolean remove(ObjectKey key, Entry seen) {
        if (!entries.remove(key, seen)) {
            return false;
        }
        counted(key);
        return true;
    }

    private void counted(ObjectKey key) {
        String folder = folderOf(key);
        if (perFolder.computeIfPresent(folder, (f, n) -> n == 1 ? null : n - 1) == null) {
            swept.remove(folder);
        }
    }

    /** Asks upstream with a HEAD; the answer becomes the key's metadata. Fails with 412 when it is not {@code ifMatch} (when given). */
    ObjectMeta ask(ObjectKey key, String ifMatch) throws IOException {
        long now = clock.nanoTime();
        ObjectMeta fresh;
        try {
            counters.upstreamRequests.increment();
            fresh = upstream.head(key);
        } catch (ObjectNotFoundException e) {
            forget(key);
            throw e;
        }
        put(key, new Entry(fresh, now, true));
        onVersion.accept(key, fresh.etag());
        if (ifMatch != null && !ifMatch.equals(fresh.etag())) {
            throw new StoreException(StoreException.Kind.PRECONDITION_FAILED, 412,
                    "object changed: " + key + " has ETag " + fresh.etag() + ", not " + ifMatch, null);
        }
        return fresh;
    }

    /**
     * A miss's GET, sent at {@code sentAt}, answered {@code meta}: it is the key's metadata now. {@code whole} when it
     * is all a HEAD answers (a GET of the whole object that asked for its checksum), not when it names no checksum
     * (a ranged GET's).
     */
    void answered(ObjectMeta meta, long sentAt, boolean whole) {
        put(meta.key(), new Entry(meta, sentAt, whole));
        onVersion.accept(meta.key(), meta.etag());
    }

    /** {@link #listed}, when nothing at all is held for the key: an entry of any age, of any version, is kept. */
    void listedIfUnknown(ObjectMeta meta) {
        if (!entries.containsKey(meta.key())) {
            listed(meta);
        }
    }

    /**
     * Metadata a listing gave, remembered as a HEAD's answer would be, fresh for the TTL. An entry that is still
     * fresh is kept (a HEAD or a write since the LIST was sent may be newer than the listing).
     */
    void listed(ObjectMeta meta) {
        long now = clock.nanoTime();
        Entry m = entries.get(meta.key());
        if (m != null && fresh(meta.key(), m, now)) {
            return;
        }
        put(meta.key(), new Entry(meta, now, false));
        onVersion.accept(meta.key(), meta.etag());
    }

    /**
     * {@code meta} with the object's checksum where the store keeps one: when the entry came from a listing or a
     * miss's ranged GET, a HEAD asks for it, now with {@code wait}, else in the background (and {@code meta} is
     * returned as it is).
     */
    ObjectMeta withChecksum(ObjectKey key, ObjectMeta meta, boolean wait) throws IOException {
        Entry m = entries.get(key);
        if (m == null || m.whole() || !m.meta().equals(meta)) {
            return meta;
        }
        if (!wait) {
            revalidate(key, m, false); // in the background: this read goes without it, the next ones have it
            return meta;
        }
        return ask(key, null);
    }

    /** A write through ferry made {@code now} the key's object (null: a delete, or a write that failed and may have replaced it). */
    void written(ObjectKey key, ObjectMeta now) {
        if (now == null) {
            forget(key);
        } else {
            put(key, new Entry(now, clock.nanoTime(), true));
            onVersion.accept(key, now.etag());
        }
    }

    /** The key is gone upstream: its metadata and every version's blocks go. */
    void forget(ObjectKey key) {
        remove(key);
        onVersion.accept(key, null);
    }

    /** A fetch pinned to the key's ETag was refused (the object changed): its next read asks upstream again. */
    void changed(ObjectKey key) {
        remove(key);
    }

    /** Vouches for these versions (key to ETag) until {@link #untrust}: reads of them ask upstream nothing, however old. */
    void trust(Map<ObjectKey, String> versions) {
        versions.forEach((key, etag) -> trusted.compute(key, (k, etags) -> {
            Map<String, Integer> more = etags == null ? new HashMap<>() : new HashMap<>(etags);
            more.merge(etag, 1, Integer::sum);
            return Map.copyOf(more);
        }));
    }

    /** Takes back one {@link #trust} of these versions. */
    void untrust(Map<ObjectKey, String> versions) {
        versions.forEach((key, etag) -> trusted.computeIfPresent(key, (k, etags) -> {
            Map<String, Integer> left = new HashMap<>(etags);
            left.computeIfPresent(etag, (e, n) -> n == 1 ? null : n - 1);
            return left.isEmpty() ? null : Map.copyOf(left);
        }));
    }

    /** No more revalidations, and none under way changes anything from now on. */
    void close() {
        closed = true;
    }
}
