package dev.ferry.store.tier;

import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.ResumingStream;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A regional group: reads of an object go to the group member that owns it ({@link Rendezvous}), which
 * fetches it from the origin once and serves it from its cache to every node of the group. The member this
 * node is itself reads the origin directly. A member that fails (refused connection, timeout, 5xx) is
 * skipped for the next one in the key's ranking, and for a while for every key; a read that breaks
 * mid-stream resumes at the byte it reached from the next member (pinned to the object's ETag), so a member
 * dying costs refetches, not failed reads. Answers that are authoritative (not found, precondition failed,
 * access denied) are not retried elsewhere. Writes, listings and multipart uploads go to the origin.
 *
 * <p>Counts bytes and requests served by peers per member, and failovers. Thread-safe.
 */
public final class GroupStore extends ForwardingObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(GroupStore.class);

    private final Rendezvous ring;
    private final int self;
    private final List<ObjectStore> members;
    private final long downNanos;
    private final AtomicLongArray downUntil;
    private final AtomicLongArray peerBytes;
    private final AtomicLongArray peerRequests;
    private final LongAdder failovers = new LongAdder();
    private final LongAdder resumes = new LongAdder();

    /** What peers have served so far. */
    public record GroupStats(long peerBytes, long peerRequests, long failovers, long resumes, List<Long> bytesByMember) {
    }

    /**
     * @param ring    the group, as every member lists it
     * @param self    this node's index in the ring, or -1 when this node is a client of the group, not a member
     * @param members a store per member reaching that member's daemon (the entry at {@code self} is unused)
     * @param origin  the object store, for this node's own keys, when every member fails, and for writes
     * @param downFor how long a failed member is skipped before it is tried again
     */
    public GroupStore(Rendezvous ring, int self, List<ObjectStore> members, ObjectStore origin, java.time.Duration downFor) {
        super(origin);
        this.ring = Objects.requireNonNull(ring, "ring is null");
        if (members.size() != ring.members().size()) {
            throw new IllegalArgumentException("need one store per member: " + members.size() + " for " + ring.members().size());
        }
        if (self < -1 || self >= members.size()) {
            throw new IllegalArgumentException("self must be -1 or a member index: " + self);
        }
        this.self = self;
        this.members = new ArrayList<>(members);
        this.downNanos = downFor.toNanos();
        this.downUntil = new AtomicLongArray(members.size());
        this.peerBytes = new AtomicLongArray(members.size());
        this.peerRequests = new AtomicLongArray(members.size());
    }

    public Rendezvous ring() {
        return ring;
    }

    /** True when this node owns {@code key} (it reads the origin for it, and serves it to the group). */
    public boolean owns(ObjectKey key) {
        return homedHere.test(key) || ring.owner(Rendezvous.keyOf(key)) == self;
    }

    private volatile java.util.function.Predicate<ObjectKey> homedHere = key -> false;

    /**
     * Keys whose plan makes this node their home (a registered job with the node partition: its shards are
     * read here every epoch): this node reads them from the origin itself and keeps them as its own, instead
     * of asking their rendezvous owner, which would serve them to this node alone every epoch.
     */
    public void homes(java.util.function.Predicate<ObjectKey> homed) {
        this.homedHere = java.util.Objects.requireNonNull(homed, "homed is null");
    }

    public GroupStats stats() {
        long bytes = 0;
        long requests = 0;
        List<Long> byMember = new ArrayList<>();
        for (int i = 0; i < members.size(); i++) {
            bytes += peerBytes.get(i);
            requests += peerRequests.get(i);
            byMember.add(peerBytes.get(i));
        }
        return new GroupStats(bytes, requests, failovers.sum(), resumes.sum(), byMember);
    }

    /** Where reads of {@code key} go, in order: live peers ranked before this node, then the origin (-1). */
    private List<Integer> route(ObjectKey key) {
        List<Integer> out = new ArrayList<>();
        if (homedHere.test(key)) {
            out.add(-1);
            return out;
        }
        long now = System.nanoTime();
        for (int m : ring.rank(Rendezvous.keyOf(key))) {
            if (m == self) {
                break; // this node is next: it reads the origin itself
            }
            if (downUntil.get(m) - now <= 0) {
                out.add(m);
            }
        }
        out.add(-1);
        return out;
    }

    private static boolean authoritative(IOException e) {
        if (e instanceof ObjectNotFoundException) {
            return true;
        }
        if (e instanceof StoreException se) {
            return se.kind() == StoreException.Kind.NOT_FOUND || se.kind() == StoreException.Kind.PRECONDITION_FAILED
                    || se.kind() == StoreException.Kind.ACCESS_DENIED || se.httpStatus() == 416;
        }
        return false;
    }

    private void markDown(int member, IOException e) {
        downUntil.set(member, System.nanoTime() + downNanos);
        failovers.increment();
        LOG.warn("group member {} failed ({}); skipping it for {} ms", ring.members().get(member), e.getMessage(), downNanos / 1_000_000);
    }

    @FunctionalInterface
    private interface Read<T> {
        T from(ObjectStore store) throws IOException;
    }

    private <T> T read(ObjectKey key, Read<T> op, List<Integer> tried) throws IOException {
        for (int m : route(key)) {
            if (m >= 0 && tried.contains(m)) {
                continue;
            }
            if (m < 0) {
                return op.from(delegate);
            }
            try {
                T result = op.from(members.get(m));
                peerRequests.incrementAndGet(m);
                tried.add(m);
                return result;
            } catch (IOException e) {
                if (authoritative(e)) {
                    throw e;
                }
                tried.add(m);
                markDown(m, e);
            }
        }
        return op.from(delegate);
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        return read(key, s -> s.head(key), new ArrayList<>());
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        List<Integer> tried = new ArrayList<>();
        int[] from = {-1}; // the member the current stream comes from; -1 for the origin
        ObjectContent content = read(request.key(), s -> {
            ObjectContent c = s.get(request);
            from[0] = s == delegate ? -1 : members.indexOf(s);
            return c;
        }, tried);
        if (from[0] < 0 || content.range() == null) {
            return content;
        }
        // A peer's body, counted; when it breaks, the rest comes from the next member (or the origin), pinned to the ETag.
        GetRequest pinned = request.withIfMatch(content.meta().etag());
        return new ObjectContent(content.meta(), content.range(), new ResumingStream("the peer's stream of " + request.key(),
                content.range(), content.stream(), (rest, e) -> {
                    if (from[0] < 0) {
                        throw e; // the origin's own failures are the retry layer's to handle
                    }
                    markDown(from[0], e);
                    resumes.increment();
                    return read(pinned.key(), s -> {
                        InputStream in = s.get(pinned.withRange(rest)).stream();
                        from[0] = s == delegate ? -1 : members.indexOf(s);
                        return in;
                    }, tried);
                }, n -> {
                    if (from[0] >= 0) {
                        peerBytes.addAndGet(from[0], n);
                    }
                }));
    }

    @Override
    public void close() throws IOException {
        for (int i = 0; i < members.size(); i++) {
            if (i != self) {
                members.get(i).close();
            }
        }
        super.close();
    }
}
