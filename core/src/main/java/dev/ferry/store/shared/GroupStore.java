package dev.ferry.store.shared;

import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.ResumingStream;
import dev.ferry.store.StoreException;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A regional group: reads of an object go to the group member that owns it ({@link Rendezvous}), which
 * fetches it from the origin once and serves it from its cache to every node of the group. The member this
 * node is itself reads the origin directly. A member that fails (refused connection, timeout, 5xx) is marked
 * down and skipped for the next one in the key's ranking, for every key, until it answers again (a prober
 * says so through {@link #answered}, or {@code downFor} passes and a read tries it); a read that breaks
 * mid-stream resumes at the byte it reached from the next member (pinned to the object's ETag), so a member
 * dying costs refetches, not failed reads. Answers that are authoritative (not found, precondition failed,
 * access denied) are not retried elsewhere. Writes, listings and multipart uploads go to the origin.
 *
 * <p>The membership changes while reads run ({@link #update}): whoever knows the group (a static list, DNS,
 * etcd) hands over the new list, and rendezvous hashing moves only the share of the members that joined or
 * left. Each read routes on the view it started with; a member that left keeps serving the streams it had.
 *
 * <p>Counts bytes and requests served by peers per member, failovers, and changes (joins, leaves, a member
 * going down or coming back). Thread-safe.
 */
public final class GroupStore extends ForwardingObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(GroupStore.class);

    private final Function<String, ObjectStore> connect;
    private final long downNanos;
    private final Clock clock;
    private final Object updates = new Object();
    private volatile View view = new View(null, -1, List.of());
    private final LongAdder peerBytes = new LongAdder();
    private final LongAdder peerRequests = new LongAdder();
    private final LongAdder failovers = new LongAdder();
    private final LongAdder resumes = new LongAdder();
    private final LongAdder changes = new LongAdder();
    private volatile Predicate<ObjectKey> homedHere = key -> false;

    /** One member as this node sees it: up or down since when, and what it has served this node. */
    public record MemberState(String url, boolean self, boolean up, Instant since, long bytesServed, long requestsServed) {
    }

    /** What peers have served so far, and the members now. */
    public record GroupStats(long peerBytes, long peerRequests, long failovers, long resumes, long changes, List<MemberState> members) {
    }

    /** A member: its client ({@code null} for this node itself), its health, its counters. */
    private static final class Member {
        final String url;
        final ObjectStore store;
        final LongAdder bytes = new LongAdder();
        final LongAdder requests = new LongAdder();
        volatile boolean up = true;
        volatile Instant since;
        volatile long downUntil;

        Member(String url, ObjectStore store, Instant since) {
            this.url = url;
            this.store = store;
            this.since = since;
        }
    }

    /** The group at one moment: the ring over its members (null when there are none) and this node's index, or -1. */
    private record View(Rendezvous ring, int self, List<Member> members) {
    }

    /**
     * A group with no members yet: reads go to the origin until {@link #update} names them.
     *
     * @param origin  the object store, for this node's own keys, when every member fails, and for writes
     * @param connect a client reaching the daemon at a member's URL (called once per member that joins)
     * @param downFor how long a failed member is skipped before a read tries it again, unless a prober says it answers
     */
    public GroupStore(ObjectStore origin, Function<String, ObjectStore> connect, Duration downFor) {
        this(origin, connect, downFor, Clock.system());
    }

    /** The same, timing members' downtime and stamping their changes on {@code clock}. */
    public GroupStore(ObjectStore origin, Function<String, ObjectStore> connect, Duration downFor, Clock clock) {
        super(origin);
        this.connect = Objects.requireNonNull(connect, "connect is null");
        this.downNanos = downFor.toNanos();
        this.clock = Objects.requireNonNull(clock, "clock is null");
    }

    /**
     * A group of fixed members.
     *
     * @param members the group, as every member lists it
     * @param self    this node's URL among them, or null when this node is a client of the group, not a member
     */
    public GroupStore(List<String> members, String self, ObjectStore origin, Function<String, ObjectStore> connect, Duration downFor) {
        this(origin, connect, downFor);
        update(members, self);
    }

    /**
     * The group's members are now {@code members} ({@code self}, this node's URL, among them or null): members
     * that joined get a client, members that left are dropped (their clients are returned for the caller to
     * close once the reads they serve are done), the others keep their client, state and counters.
     *
     * @return the clients of the members that left
     */
    public List<ObjectStore> update(List<String> members, String self) {
        synchronized (updates) {
            View old = view;
            if (old.ring != null && old.ring.members().equals(members) && old.self == members.indexOf(self)) {
                return List.of();
            }
            Map<String, Member> known = new HashMap<>();
            old.members.forEach(m -> known.put(m.url, m));
            Instant now = clock.now();
            List<Member> next = new ArrayList<>();
            List<ObjectStore> retired = new ArrayList<>();
            for (String url : members) {
                Member m = known.remove(url);
                boolean isSelf = url.equals(self);
                if (m != null && (m.store == null) != isSelf) {
                    if (m.store != null) {
                        retired.add(m.store); // this node took the URL over (its --self changed): no client to itself
                    }
                    m = new Member(url, isSelf ? null : connect.apply(url), m.since);
                } else if (m == null) {
                    m = new Member(url, isSelf ? null : connect.apply(url), now);
                    changes.increment();
                    LOG.info("group member {} joined{}", url, isSelf ? " (this node)" : "");
                }
                next.add(m);
            }
            for (Member m : known.values()) {
                changes.increment();
                LOG.info("group member {} left", m.url);
                if (m.store != null) {
                    retired.add(m.store);
                }
            }
            view = new View(members.isEmpty() ? null : new Rendezvous(members), self == null ? -1 : members.indexOf(self), List.copyOf(next));
            return retired;
        }
    }

    /** The members' URLs now, in the group's order. */
    public List<String> members() {
        return view.members.stream().map(m -> m.url).toList();
    }

    /** This node's URL in the group now, or null when it is not a member. */
    public String self() {
        View v = view;
        return v.self < 0 ? null : v.members.get(v.self).url;
    }

    /** True when this node owns {@code key} (it reads the origin for it, and serves it to the group). */
    public boolean owns(ObjectKey key) {
        if (homedHere.test(key)) {
            return true;
        }
        View v = view;
        return v.self >= 0 && owner(v, key) == v.self;
    }

    /** The URL of the member that owns {@code key} now (the first in its ranking that is up), or null with no members. */
    public String ownerOf(ObjectKey key) {
        View v = view;
        int o = owner(v, key);
        return o < 0 ? null : v.members.get(o).url;
    }

    private int owner(View v, ObjectKey key) {
        if (v.ring == null) {
            return -1;
        }
        long now = clock.nanoTime();
        List<Integer> rank = v.ring.rank(Rendezvous.keyOf(key));
        for (int m : rank) {
            if (m == v.self || !skipped(v.members.get(m), now)) {
                return m;
            }
        }
        return rank.get(0);
    }

    /**
     * Keys whose plan makes this node their home (a registered job with the node partition: its shards are
     * read here every epoch): this node reads them from the origin itself and keeps them as its own, instead
     * of asking their rendezvous owner, which would serve them to this node alone every epoch.
     */
    public void homes(Predicate<ObjectKey> homed) {
        this.homedHere = Objects.requireNonNull(homed, "homed is null");
    }

    public GroupStats stats() {
        List<MemberState> states = new ArrayList<>();
        long now = clock.nanoTime();
        for (Member m : view.members) {
            states.add(new MemberState(m.url, m.store == null, m.store == null || !skipped(m, now), m.since, m.bytes.sum(), m.requests.sum()));
        }
        return new GroupStats(peerBytes.sum(), peerRequests.sum(), failovers.sum(), resumes.sum(), changes.sum(), states);
    }

    /** True when {@code url} is a member now and is not being skipped. */
    public boolean isUp(String url) {
        long now = clock.nanoTime();
        for (Member m : view.members) {
            if (m.url.equals(url)) {
                return !skipped(m, now);
            }
        }
        return false;
    }

    /** The URLs of the members that are down now (for a prober to ask). */
    public List<String> down() {
        return view.members.stream().filter(m -> m.store != null && !m.up).map(m -> m.url).toList();
    }

    /** A prober reached the member at {@code url}: it is up again. */
    public void answered(String url) {
        for (Member m : view.members) {
            if (m.url.equals(url)) {
                markUp(m);
            }
        }
    }

    /** A prober could not reach the member at {@code url}: it stays down, or goes down. */
    public void unanswered(String url, String why) {
        for (Member m : view.members) {
            if (m.url.equals(url) && m.store != null) {
                markDown(m, why, false);
            }
        }
    }

    private boolean skipped(Member m, long now) {
        return !m.up && m.downUntil - now > 0;
    }

    /** Where reads of {@code key} go, in order: live peers ranked before this node, then the origin (null). */
    private List<Member> route(View v, ObjectKey key) {
        List<Member> out = new ArrayList<>();
        if (homedHere.test(key) || v.ring == null) {
            out.add(null);
            return out;
        }
        long now = clock.nanoTime();
        for (int m : v.ring.rank(Rendezvous.keyOf(key))) {
            if (m == v.self) {
                break; // this node is next: it reads the origin itself
            }
            Member member = v.members.get(m);
            if (!skipped(member, now)) {
                out.add(member);
            }
        }
        out.add(null);
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

    private void markDown(Member m, String why, boolean failover) {
        m.downUntil = clock.nanoTime() + downNanos;
        if (failover) {
            failovers.increment();
        }
        synchronized (m) {
            if (!m.up) {
                return;
            }
            m.up = false;
            m.since = clock.now();
        }
        changes.increment();
        LOG.warn("group member {} failed ({}); skipping it until it answers again", m.url, why);
    }

    private void markUp(Member m) {
        synchronized (m) {
            if (m.up) {
                return;
            }
            m.up = true;
            m.since = clock.now();
        }
        m.downUntil = 0;
        changes.increment();
        LOG.info("group member {} answers again", m.url);
    }

    @FunctionalInterface
    private interface Read<T> {
        T from(ObjectStore store) throws IOException;
    }

    /** Reads from the first member of the key's route that answers (recording it in {@code from}), or the origin. */
    private <T> T read(View v, ObjectKey key, Read<T> op, List<Member> tried, Member[] from) throws IOException {
        for (Member m : route(v, key)) {
            if (m == null) {
                break;
            }
            if (tried.contains(m)) {
                continue;
            }
            try {
                T result = op.from(m.store);
                m.requests.increment();
                peerRequests.increment();
                tried.add(m);
                from[0] = m;
                if (!m.up) {
                    markUp(m); // tried again after downFor, and it answered
                }
                return result;
            } catch (IOException e) {
                if (authoritative(e)) {
                    throw e;
                }
                tried.add(m);
                markDown(m, e.getMessage(), true);
            }
        }
        from[0] = null;
        return op.from(delegate);
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        return read(view, key, s -> s.head(key), new ArrayList<>(), new Member[1]);
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        View v = view;
        List<Member> tried = new ArrayList<>();
        Member[] from = new Member[1]; // the member the current stream comes from; null for the origin
        ObjectContent content = read(v, request.key(), s -> s.get(request), tried, from);
        if (from[0] == null || content.range() == null) {
            return content;
        }
        // A peer's body, counted; when it breaks, the rest comes from the next member (or the origin), pinned to the ETag.
        GetRequest pinned = request.withIfMatch(content.meta().etag());
        return new ObjectContent(content.meta(), content.range(), new ResumingStream("the peer's stream of " + request.key(),
                content.range(), content.stream(), (rest, e) -> {
                    if (from[0] == null) {
                        throw e; // the origin's own failures are the retry layer's to handle
                    }
                    markDown(from[0], e.getMessage(), true);
                    resumes.increment();
                    return read(v, pinned.key(), s -> s.get(pinned.withRange(rest)).stream(), tried, from);
                }, n -> {
                    Member m = from[0];
                    if (m != null) {
                        m.bytes.add(n);
                        peerBytes.add(n);
                    }
                }));
    }

    @Override
    public void close() throws IOException {
        for (Member m : view.members) {
            if (m.store != null) {
                m.store.close();
            }
        }
        super.close();
    }
}
