package dev.ferry.serve.membership;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * A source of the group's member list: it reports the list when it starts and again whenever it changes,
 * with no restart. Members are daemon URLs; every node that reads the same source computes the same list
 * (sorted where the source has no order of its own), so rendezvous hashing agrees across nodes.
 * Implementations are thread-safe; the listener is called from one thread at a time.
 */
public interface Membership extends AutoCloseable {
    /** Where the members come from, as the status shows it: {@code static}, {@code dns:NAME:PORT}, {@code etcd:URL/PREFIX}. */
    String source();

    /**
     * Starts following the group: {@code listener} gets the member list before this returns (it may be empty
     * when the source cannot be reached yet) and again at every change. {@code self} is this daemon's URL
     * (a source where members register themselves, etcd, registers it).
     */
    void start(URI self, Consumer<List<URI>> listener) throws IOException;

    /** Stops following, and withdraws this daemon where it registered itself. */
    @Override
    void close();

    /** The membership {@code spec} describes; {@code refresh}: how often a source is asked again (a lease's renewal). */
    static Membership of(GroupSpec spec, Duration refresh) {
        return switch (spec) {
            case GroupSpec.Static s -> new StaticMembership(s.members());
            case GroupSpec.Dns d -> new DnsMembership(d, new DnsLookup(d.server()), refresh);
            case GroupSpec.Etcd e -> new EtcdMembership(e, refresh);
        };
    }
}
