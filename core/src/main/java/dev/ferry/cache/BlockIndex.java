package dev.ferry.cache;

import dev.ferry.cache.policy.EvictionPolicy;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local tier's bookkeeping: which blocks are on disk ({@link BlockEntry}, by id and by object), the bytes
 * they use, pins (a block being read is never a victim), reservations (room held for a block being fetched,
 * not yet readable), and eviction from high to low watermark. Every access, admission and removal is told to
 * the {@link EvictionPolicy} (a pure data structure), so the policy sees exactly what the index holds.
 *
 * <p>A prefetched block the policy would not keep (MIN streams it through at its read) is still fetched ahead
 * and held for its reads, outside the capacity and outside the policy ({@link OneReadHolds}, an eighth of the
 * capacity): the reader finds it on disk, and nothing the policy keeps is evicted for it.
 *
 * <p>Files are deleted right after the bookkeeping, outside the lock (an evicted block is never pinned, and a
 * stale or corrupt one may still be open by a reader, which POSIX allows); {@code onDelete} is told of each
 * first, so open channels and pending fsyncs forget it.
 *
 * <p>Thread-safe: one lock guards the maps, {@code used}, the held blocks, every entry's state, and the
 * policy; it is held only for bookkeeping, never for I/O.
 */
final class BlockIndex {
    private static final Logger LOG = LoggerFactory.getLogger(BlockIndex.class);

    private enum Cause { CAPACITY, STALE, CORRUPT, READ, DROPPED }

    private final CacheConfig config;
    private final Path blocksDir;
    private final EvictionPolicy<BlockId> policy;
    private final CacheCounters counters;
    private final Consumer<Path> onDelete;
    private volatile boolean reserving = true;

    private final Object lock = new Object();
    private final Map<BlockId, BlockEntry> index = new HashMap<>();
    private final Map<ObjectKey, Set<BlockId>> byObject = new HashMap<>();
    private long used;
    /** Bytes of the capacity lent to another holder on the same disk (the decoded samples); guarded by the lock. */
    private long lent;
    /** The blocks held for one read (see the class comment); guarded by the lock. */
    private final OneReadHolds held;
    private final VersionPins versionPins = new VersionPins();
    private final Clock clock;

    BlockIndex(CacheConfig config, CacheLayout layout, EvictionPolicy<BlockId> policy, CacheCounters counters, Consumer<Path> onDelete,
            Clock clock) {
        this.clock = clock;
        this.config = config;
        this.blocksDir = layout.blocks();
        this.policy = policy;
        this.counters = counters;
        this.onDelete = onDelete;
        this.held = new OneReadHolds(config.capacity() / 8, index::get, this::removable, policy::plannedUse);
    }

    /** The bytes blocks may hold: the configured capacity less what is lent. Under the lock. */
    private long capacity() {
        return config.capacity() - lent;
    }

    /**
     * Lends {@code bytes} of the capacity (0 to the whole of it) to another holder on the same disk, replacing what
     * was lent before; when the blocks hold more than is left, they evict down to the low watermark of what is left,
     * in the policy's order. Returns the bytes lent.
     */
    long lend(long bytes) {
        List<Path> deletions = new ArrayList<>();
        long now;
        synchronized (lock) {
            lent = Math.max(0, Math.min(config.capacity(), bytes));
            now = lent;
            if (used > capacity()) {
                evictLocked(0, (long) (capacity() * config.lowWatermark()), deletions, true);
            }
        }
        deleteFiles(deletions);
        return now;
    }

    /** Resident blocks and the bytes they hold, read together. */
    record Usage(long blocks, long bytes) {
    }

    Usage usage() {
        synchronized (lock) {
            return new Usage(index.size() - held.size(), used);
        }
    }

    /** A resident block as {@link TierContents} counts it: its object, its bytes, its latest use (a read, else its arrival). */
    record Resident(ObjectKey key, long bytes, long lastUseNanos) {
    }

    /**
     * A snapshot of the resident blocks (not those held outside the capacity for one read) of {@code bucket}'s keys
     * that start with {@code prefix}; of every bucket's when {@code bucket} is null.
     */
    List<Resident> residentUnder(String bucket, String prefix) {
        List<Resident> out = new ArrayList<>();
        synchronized (lock) {
            for (Map.Entry<ObjectKey, Set<BlockId>> o : byObject.entrySet()) {
                ObjectKey key = o.getKey();
                if (bucket != null && (!key.bucket().equals(bucket) || !key.key().startsWith(prefix))) {
                    continue;
                }
                for (BlockId id : o.getValue()) {
                    BlockEntry e = index.get(id);
                    if (e != null && e.ready && !e.transit) {
                        out.add(new Resident(key, e.dataLength, Math.max(e.lastReadNanos, e.arrivedNanos)));
                    }
                }
            }
        }
        return out;
    }

    /**
     * Drops every resident block of {@code bucket}'s keys that start with {@code prefix}, but those in use as eviction
     * leaves them (pinned by a reader, a superseded version a reader holds) and those being fetched (their fetch
     * publishes them). The blocks and bytes dropped.
     */
    Usage drop(String bucket, String prefix) {
        List<Path> deletions = new ArrayList<>();
        long[] dropped = new long[2]; // blocks, bytes
        synchronized (lock) {
            for (ObjectKey key : List.copyOf(byObject.keySet())) {
                if (key.bucket().equals(bucket) && key.key().startsWith(prefix)) {
                    // a block being read, or a superseded version a reader holds, stays: as eviction leaves them
                    removeAllLocked(key, id -> {
                        BlockEntry e = index.get(id);
                        boolean drop = e != null && removable(e);
                        dropped[0] += drop ? 1 : 0;
                        dropped[1] += drop ? e.dataLength : 0;
                        return drop;
                    }, Cause.DROPPED, deletions);
                }
            }
        }
        deleteFiles(deletions);
        return new Usage(dropped[0], dropped[1]);
    }

    /** Takes in the blocks found on disk at open, then evicts down to the low watermark if they are too many. */
    void load(List<BlockEntry> recovered) {
        List<Path> deletions = new ArrayList<>();
        synchronized (lock) {
            for (BlockEntry e : recovered) {
                e.ready = true;
                index.put(e.id, e);
                byObject.computeIfAbsent(e.id.key(), k -> new HashSet<>()).add(e.id);
                used += e.dataLength;
                policy.onAdd(e.id, e.dataLength);
            }
            evictLocked(0, (long) (capacity() * config.lowWatermark()), deletions, used > capacity());
        }
        deleteFiles(deletions);
    }

    /** From now on no block is reserved (the cache is closing, or cannot use its directory). */
    void stopReserving() {
        reserving = false;
    }

    /** The ready blocks, for the snapshot. */
    List<BlockEntry> readyEntries() {
        synchronized (lock) {
            return index.values().stream().filter(e -> e.ready && !e.removed).toList();
        }
    }

    /** True when a block of {@code key} at {@code blockIndex} is resident or being fetched, of any version. */
    boolean holdsAnyVersionAt(ObjectKey key, long blockIndex) {
        synchronized (lock) {
            Set<BlockId> ids = byObject.get(key);
            return ids != null && ids.stream().anyMatch(id -> id.index() == blockIndex);
        }
    }

    boolean isResident(BlockId id) {
        synchronized (lock) {
            BlockEntry e = index.get(id);
            return e != null && e.ready;
        }
    }

    /**
     * The resident block pinned, and counted as an access by the policy when {@code access} (not for a block a
     * reader's own run fetched: its reservation was the access); null when it is not resident.
     */
    BlockEntry pinForRead(BlockId id, boolean access) {
        synchronized (lock) {
            BlockEntry e = index.get(id);
            if (e == null || !e.ready) {
                return null;
            }
            e.pins++;
            if (access) {
                policy.onHit(id);
            }
            e.read = true;
            e.lastReadNanos = clock.nanoTime();
            return e;
        }
    }

    /**
     * Every block of {@code ids} pinned, when each is resident; null (nothing pinned) otherwise. The policy is
     * told of the accesses by {@link #unpinAsHits}, once the blocks are used.
     */
    List<BlockEntry> pinAll(List<BlockId> ids) {
        List<BlockEntry> pinned = new ArrayList<>(ids.size());
        synchronized (lock) {
            for (BlockId id : ids) {
                BlockEntry e = index.get(id);
                if (e == null || !e.ready) {
                    pinned.forEach(p -> p.pins--);
                    return null;
                }
                e.pins++;
                pinned.add(e);
            }
        }
        return pinned;
    }

    void unpin(BlockEntry e) {
        synchronized (lock) {
            e.pins--;
        }
    }

    void unpinAll(List<BlockEntry> pinned) {
        synchronized (lock) {
            pinned.forEach(p -> p.pins--);
        }
    }

    void unpinAsHits(List<BlockEntry> pinned) {
        synchronized (lock) {
            long now = clock.nanoTime();
            for (BlockEntry e : pinned) {
                e.pins--;
                if (!e.removed) { // dropped meanwhile (a drop, a new version): the policy has forgotten it
                    policy.onHit(e.id);
                }
                e.read = true;
                e.lastReadNanos = now;
            }
        }
    }

    /** An access to a block that is not resident yet (another reader is fetching it): plan-aware policies must see it. */
    void onHit(BlockId id) {
        synchronized (lock) {
            policy.onHit(id);
            BlockEntry e = index.get(id);
            if (e != null) {
                e.read = true;
            }
        }
    }

    /** A pinned block failed its check: unpins it, drops it (unless already gone) and deletes its file. */
    void dropCorrupt(BlockEntry e) {
        Path path;
        synchronized (lock) {
            e.pins--;
            path = e.removed ? null : removeLocked(e.id, Cause.CORRUPT);
        }
        deleteFiles(path == null ? List.of() : List.of(path));
    }

    /**
     * Drops the blocks of {@code key} whose version is not {@code etag} (all of them when null), except those of
     * pinned versions, which are marked superseded and dropped when their last pin goes.
     */
    void dropVersionsOtherThan(ObjectKey key, String etag) {
        List<Path> deletions = new ArrayList<>();
        synchronized (lock) {
            versionPins.current(key, etag);
            removeAllLocked(key, id -> !id.etag().equals(etag) && !versionPins.pinned(key, id.etag()), Cause.STALE, deletions);
        }
        deleteFiles(deletions);
    }

    /** Pins {@code meta}'s version (see {@link VersionPins}). Every call needs one {@link #unpinVersion}. */
    void pinVersion(ObjectMeta meta) {
        synchronized (lock) {
            versionPins.pin(meta);
        }
    }

    /** Drops one pin of a version; when it was the last and the version is superseded, drops its blocks. */
    void unpinVersion(ObjectMeta meta) {
        List<Path> deletions = new ArrayList<>();
        synchronized (lock) {
            if (versionPins.unpin(meta)) {
                removeAllLocked(meta.key(), id -> id.etag().equals(meta.etag()), Cause.STALE, deletions);
            }
        }
        deleteFiles(deletions);
    }

    /** The metadata of a pinned version of {@code key}, current or superseded; null when {@code etag} is not pinned. */
    ObjectMeta pinnedMeta(ObjectKey key, String etag) {
        synchronized (lock) {
            return versionPins.meta(key, etag);
        }
    }

    /**
     * Asks the policy whether a missing block should be kept and, if so, makes room (evicting from high to
     * low watermark, or only its own room: {@link #admitLocked}) and reserves it: a placeholder entry, not yet
     * readable, that no eviction touches. Null when the block is not to be kept; the read then goes on without it.
     * {@code ahead}: fetched ahead of its access (a prefetch), so the policy is asked with
     * {@link EvictionPolicy#admitAhead}.
     */
    BlockEntry reserve(BlockId id, long length, boolean ahead) {
        if (!reserving) {
            return null;
        }
        BlockEntry e;
        List<Path> deletions = new ArrayList<>();
        synchronized (lock) {
            if (index.containsKey(id)) {
                return null;
            }
            long high = (long) (capacity() * config.highWatermark());
            boolean mustEvict = used + length > high;
            boolean planned = EvictionPolicy.isPlanned(policy.plannedUse(id)); // before admit: MIN's admit consumes the use
            if (!(ahead ? policy.admitAhead(id, length, mustEvict) : policy.admit(id, length, mustEvict))) {
                // held for its read, unless the policy knows it is never read
                e = ahead && policy.plannedUse(id) != Long.MAX_VALUE ? holdForOneReadLocked(id, length, deletions) : null;
                if (e == null) {
                    counters.bypassed.increment();
                }
            } else {
                e = admitLocked(id, length, mustEvict, ahead || planned, deletions);
            }
        }
        deleteFiles(deletions);
        return e;
    }

    /**
     * Makes room for an admitted block and reserves it; null when room cannot be made. A prefetch, and a block a
     * plan reads (the policy knows its next use), make just the room they need ({@code ownRoom}: down to the high
     * watermark, not the low one): the admission weighed one victim, the farthest used, and the blocks after it
     * are read again before long, each fetched again if evicted now (a tier smaller than a node's share lost about
     * 5% of its room to the batch eviction every later epoch).
     */
    private BlockEntry admitLocked(BlockId id, long length, boolean mustEvict, boolean ownRoom, List<Path> deletions) {
        boolean couldFit = length <= capacity(); // one that never could evicts nothing for its refusal
        if (couldFit && mustEvict) {
            double target = ownRoom ? config.highWatermark() : config.lowWatermark();
            // a block no plan reads again (a checkpoint read back, a one-off read) makes its room from blocks no plan
            // reads either: the policy weighed one victim, and evicting down to the low watermark would take planned
            // blocks after it
            boolean unplanned = policy.plannedUse(id) == Long.MAX_VALUE;
            evictLocked(length, (long) (capacity() * target), deletions, false,
                    unplanned ? k -> policy.plannedUse(k) == Long.MAX_VALUE : k -> true);
        }
        if (!couldFit || used + length > capacity()) {
            policy.onRemove(id);
            counters.bypassed.increment();
            return null;
        }
        BlockEntry e = reservationLocked(id, length);
        used += length;
        policy.onAdd(id, length);
        return e;
    }

    /** A reservation for {@code id}, in the index (its bytes are the caller's to count). */
    private BlockEntry reservationLocked(BlockId id, long length) {
        BlockEntry e = new BlockEntry(id, BlockFile.pathFor(blocksDir, id), 0, (int) length, 0, 0, false);
        index.put(id, e);
        byObject.computeIfAbsent(id.key(), k -> new HashSet<>()).add(id);
        return e;
    }

    /**
     * Reserves a prefetched block the policy would not keep, to be held for its reads (see the class comment),
     * making room among the held blocks as MIN would: with a policy that knows the future, the held blocks
     * used after this one leave, farthest first (never one needed sooner); without, those read leave, oldest
     * first. Without such a policy, unread blocks held through many later holds leave too (their reader never
     * came); with one, an unread block leaves only when its planned read is later than this one's. Null
     * when no room can be made.
     */
    private BlockEntry holdForOneReadLocked(BlockId id, long length, List<Path> deletions) {
        long mine = policy.plannedUse(id);
        if (mine >= 0) {
            // a held block whose reads are done and whose next use is further off than a tier's worth of reads
            // leaves now: the held room is for reads about to happen, not a second cache beside the policy's
            long soon = mine + Math.max(1, capacity() / Math.max(1, length));
            held.readAndNotSoon(soon).forEach(done -> deletions.add(removeLocked(done, Cause.READ)));
        }
        while (!held.fits(length)) {
            BlockId out = held.victim(length, mine);
            if (out == null) {
                return null;
            }
            deletions.add(removeLocked(out, Cause.READ));
        }
        BlockEntry e = reservationLocked(id, length);
        e.transit = true;
        held.add(id, length);
        return e;
    }

    /** Gives back a reservation whose bytes never came. */
    void releaseReservation(BlockEntry reserved) {
        synchronized (lock) {
            if (!reserved.removed && index.get(reserved.id) == reserved) {
                removeLocked(reserved.id, null);
            }
        }
    }

    /**
     * Makes a reserved block readable: {@code ready} (its file already in place) takes the reservation's place.
     * When the reservation was dropped meanwhile (a new version, say), the file is an orphan and is deleted, and
     * this is false.
     */
    boolean publish(BlockEntry reserved, BlockEntry ready) {
        boolean orphan;
        synchronized (lock) {
            orphan = reserved.removed || index.get(reserved.id) != reserved;
            if (!orphan) {
                ready.transit = reserved.transit;
                ready.read = reserved.read;
                ready.lastReadNanos = reserved.lastReadNanos;
                index.put(reserved.id, ready);
            }
        }
        if (orphan) {
            deleteFiles(List.of(reserved.path));
        }
        return !orphan;
    }

    /** Evicts until {@code used + incoming <= target}; with {@code force}, ignores the target until under capacity. */
    private void evictLocked(long incoming, long target, List<Path> deletions, boolean force) {
        evictLocked(incoming, target, deletions, force, k -> true);
    }

    /** As {@link #evictLocked(long, long, List, boolean)}, taking only victims {@code allowed} accepts. */
    private void evictLocked(long incoming, long target, List<Path> deletions, boolean force,
            java.util.function.Predicate<BlockId> allowed) {
        while (used + incoming > target || (force && used > capacity())) {
            BlockId victim = policy.victim(k -> {
                BlockEntry c = index.get(k);
                return c != null && removable(c) && allowed.test(k);
            });
            if (victim == null) {
                return;
            }
            deletions.add(removeLocked(victim, Cause.CAPACITY));
        }
    }

    /** Ready, unpinned, and not a superseded version a reader holds: a block that may leave. */
    private boolean removable(BlockEntry e) {
        return e.ready && e.pins == 0 && !versionPins.holdsSuperseded(e.id);
    }

    /** Removes the blocks of {@code key} that {@code which} selects, adding their files to {@code deletions}. */
    private void removeAllLocked(ObjectKey key, java.util.function.Predicate<BlockId> which, Cause cause, List<Path> deletions) {
        Set<BlockId> ids = byObject.get(key);
        if (ids != null) {
            for (BlockId id : List.copyOf(ids)) {
                if (which.test(id)) {
                    deletions.add(removeLocked(id, cause));
                }
            }
        }
    }

    /** Removes an entry from the index and the policy; returns its file, for the caller to delete unlocked. */
    private Path removeLocked(BlockId id, Cause cause) {
        BlockEntry e = index.remove(id);
        if (e == null) {
            return null;
        }
        e.removed = true;
        Set<BlockId> ids = byObject.get(id.key());
        if (ids != null) {
            ids.remove(id);
            if (ids.isEmpty()) {
                byObject.remove(id.key());
            }
        }
        if (e.transit) {
            held.remove(id, e.dataLength);
        } else {
            used -= e.dataLength;
            policy.onRemove(id);
        }
        if (cause == Cause.CAPACITY) {
            counters.evictedCapacity.increment();
        } else if (cause == Cause.STALE) {
            counters.evictedStale.increment();
        } else if (cause == Cause.CORRUPT) {
            counters.evictedCorrupt.increment();
        }
        return e.path;
    }

    private void deleteFiles(List<Path> paths) {
        for (Path p : paths) {
            if (p == null) {
                continue;
            }
            onDelete.accept(p);
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                LOG.warn("cannot delete evicted block {}: {}", p, e.getMessage());
            }
        }
    }
}
