package dev.ferry.serve.membership;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The members are the addresses a DNS name has now, each a daemon on the same port: a Kubernetes headless
 * Service (its A/AAAA records are its ready pods), or any name a DNS server keeps. The name is looked up
 * again every {@code refresh}; the members are the sorted addresses ({@code http://ADDR:PORT}). A lookup that
 * fails keeps the last list (a DNS outage must not empty the group); a name with no records empties it.
 * Thread-safe.
 */
final class DnsMembership implements Membership {
    private static final Logger LOG = LoggerFactory.getLogger(DnsMembership.class);

    private final GroupSpec.Dns spec;
    private final DnsLookup dns;
    private final Duration refresh;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ferry-group-dns");
        t.setDaemon(true);
        return t;
    });
    private volatile List<URI> last;
    private volatile boolean failing;

    DnsMembership(GroupSpec.Dns spec, DnsLookup dns, Duration refresh) {
        this.spec = spec;
        this.dns = dns;
        this.refresh = refresh;
    }

    @Override
    public String source() {
        return spec.text();
    }

    @Override
    public void start(URI self, Consumer<List<URI>> listener) {
        poll(listener);
        if (last == null) {
            last = List.of();
            listener.accept(last);
        }
        long every = Math.max(100, refresh.toMillis());
        timer.scheduleWithFixedDelay(() -> poll(listener), every, every, TimeUnit.MILLISECONDS);
    }

    /** Whether the last lookup failed (the last members are kept meanwhile). */
    boolean failing() {
        return failing;
    }

    private void poll(Consumer<List<URI>> listener) {
        List<URI> now;
        try {
            now = members(dns.lookup(spec.name()), spec.port());
        } catch (IOException | RuntimeException e) {
            if (!failing) {
                LOG.warn("cannot look up the group's name {} (keeping the last members): {}", spec.name(), e.getMessage());
                failing = true;
            }
            return;
        }
        if (failing) {
            LOG.info("the group's name {} answers again", spec.name());
            failing = false;
        }
        if (!now.equals(last)) {
            LOG.info("group {}: {}", spec.text(), now);
            last = now;
            try {
                listener.accept(now);
            } catch (RuntimeException e) {
                LOG.warn("applying the group's new members failed: {}", e.toString());
            }
        }
    }

    /** The daemons at {@code addresses} on {@code port}, sorted by address (IPv4 first), each once. */
    static List<URI> members(List<InetAddress> addresses, int port) {
        return Urls.sorted(addresses.stream().map(a -> url(a, port)).toList());
    }

    static URI url(InetAddress a, int port) {
        String host = a.getHostAddress();
        if (a instanceof Inet6Address) {
            int zone = host.indexOf('%');
            host = "[" + (zone < 0 ? host : host.substring(0, zone)) + "]";
        }
        return URI.create("http://" + host + ":" + port);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
