package dev.ferry.serve.node;

import dev.ferry.serve.membership.MemberProber;
import dev.ferry.serve.membership.Membership;
import dev.ferry.serve.membership.SelfAddress;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.shared.GroupStore;
import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The regional group as one node takes part in it: the group tier ({@link GroupStore}: who is a member, who owns
 * what), where its member list comes from and how it is followed (a {@link Membership}, applied with no restart;
 * a {@link MemberProber}), and the hints ({@link HintedStore}) that ask a block of the member that read it last
 * epoch. Its counters are in the node's {@link Counters}. Thread-safe.
 */
public final class RegionalGroup {
    private static final Logger LOG = LoggerFactory.getLogger(RegionalGroup.class);

    private final GroupStore group;
    private final HintedStore hints;
    private final NodeConfig config;
    /** The node's timer thread: a departed member's client is closed on it, a minute after it left. */
    private final ScheduledExecutorService timers;
    private volatile Membership membership;
    private MemberProber prober;

    RegionalGroup(GroupStore group, HintedStore hints, NodeConfig config, ScheduledExecutorService timers) {
        this.group = group;
        this.hints = hints;
        this.config = config;
        this.timers = timers;
    }

    /** Where the members come from ({@code static}, {@code dns:...}, {@code etcd:...}), or null until the node joins. */
    public String source() {
        Membership m = membership;
        return m == null ? null : m.source();
    }

    /** The members' URLs now, in the group's order. */
    public List<String> members() {
        return group.members();
    }

    /** This daemon's URL in the group now, or null when it is a client of the group, not a member. */
    public String self() {
        return group.self();
    }

    /** True when this daemon owns {@code key} in the group now: it reads the origin for it and serves it to the others. */
    public boolean owns(ObjectKey key) {
        return group.owns(key);
    }

    /**
     * The keys whose plans make this node their home (read here every epoch): this node reads them from the origin
     * itself and keeps them as its own, instead of asking their owner in the group.
     */
    public void homes(Predicate<ObjectKey> homed) {
        group.homes(homed);
    }

    /** Who read each block last epoch, as the plans say: the hints ask that member first. Until this is called, nobody. */
    public void hintsFrom(BlockHolders holders) {
        hints.askFirst(holders);
    }

    /** What the hints have served, and missed, so far. */
    HintedStore.HintStats hintStats() {
        return hints.stats();
    }

    /**
     * Follows the membership source once the daemon listens on {@code port} (a static list, DNS, etcd: this daemon
     * registers where members register), applies each new member list to the group, and probes the other members
     * every {@code group-probe}.
     */
    void join(int port) throws IOException {
        membership = Membership.of(config.group(), config.groupRefresh());
        membership.start(SelfAddress.advertised(config.self(), config.bind(), port), members -> apply(members, port));
        if (!config.groupProbe().isZero()) {
            prober = MemberProber.start(group, config.groupProbe());
        }
    }

    private void apply(List<URI> members, int port) {
        URI self = SelfAddress.among(members, config.self(), config.bind(), port);
        List<ObjectStore> retired = group.update(members.stream().map(URI::toString).toList(), self == null ? null : self.toString());
        if (!retired.isEmpty()) {
            // a member that left may still be serving a stream this node reads: its client goes a minute later
            timers.schedule(() -> retired.forEach(RegionalGroup::closeQuietly), 60, TimeUnit.SECONDS);
        }
    }

    private static void closeQuietly(ObjectStore store) {
        try {
            store.close();
        } catch (IOException | RuntimeException e) {
            LOG.debug("closing a departed member's client: {}", e.toString());
        }
    }

    /** Stops probing and following the source (an etcd member withdraws at once); the group's stores close with the tiers. */
    void leave() {
        if (prober != null) {
            prober.close();
        }
        if (membership != null) {
            membership.close();
        }
    }
}
