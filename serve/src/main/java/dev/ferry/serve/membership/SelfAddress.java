package dev.ferry.serve.membership;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Which member is this daemon when {@code --self} is not given: the one on this daemon's port at the address it
 * binds, or with a wildcard bind at one of this machine's addresses (for a {@code dns:} group, the record that
 * is this pod); and what URL it
 * registers where members register themselves (etcd): its bind address, or with a wildcard bind the first
 * address of an interface that is up and not loopback (a pod has one). Stateless.
 */
public final class SelfAddress {
    private SelfAddress() {
    }

    /**
     * The member of {@code members} that is this daemon: {@code explicit} when given (null when not listed);
     * else the member on {@code port} whose host is the address the daemon binds, or with a wildcard bind one
     * of this machine's addresses; null: none (a client of the group).
     */
    public static URI among(List<URI> members, URI explicit, String bind, int port) {
        if (explicit != null) {
            return members.contains(explicit) ? explicit : null;
        }
        Set<InetAddress> mine;
        if (isWildcard(bind)) {
            mine = local();
        } else {
            try {
                mine = Set.of(InetAddress.getAllByName(bind.startsWith("[") ? bind.substring(1, bind.length() - 1) : bind));
            } catch (UnknownHostException e) {
                return null;
            }
        }
        for (URI m : members) {
            int p = m.getPort() >= 0 ? m.getPort() : m.getScheme().equals("https") ? 443 : 80;
            if (p != port) {
                continue;
            }
            try {
                for (InetAddress a : InetAddress.getAllByName(m.getHost())) {
                    if (mine.contains(a)) {
                        return m;
                    }
                }
            } catch (UnknownHostException e) {
                // not a name this machine knows: not this daemon
            }
        }
        return null;
    }

    static boolean isWildcard(String bind) {
        return bind.equals("0.0.0.0") || bind.equals("::") || bind.equals("[::]");
    }

    /** The URL this daemon registers in a group: {@code explicit}, else {@code http://BIND:PORT}, else with a wildcard bind this host's address. */
    public static URI advertised(URI explicit, String bind, int port) {
        if (explicit != null) {
            return explicit;
        }
        String host = bind;
        if (isWildcard(bind)) {
            host = primary().getHostAddress();
        }
        if (host.contains(":") && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        return URI.create("http://" + host + ":" + port);
    }

    /** Every address of this machine's interfaces. */
    static Set<InetAddress> local() {
        Set<InetAddress> out = new HashSet<>();
        try {
            for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                out.addAll(Collections.list(nif.getInetAddresses()));
            }
        } catch (IOException e) {
            // no interfaces readable: no address is ours
        }
        return out;
    }

    /** The first IPv4 address (else any address) of an interface that is up and not loopback, by interface index; loopback when none. */
    static InetAddress primary() {
        List<InetAddress> v4 = new ArrayList<>();
        List<InetAddress> other = new ArrayList<>();
        try {
            List<NetworkInterface> nifs = new ArrayList<>(Collections.list(NetworkInterface.getNetworkInterfaces()));
            nifs.sort((a, b) -> Integer.compare(a.getIndex(), b.getIndex()));
            for (NetworkInterface nif : nifs) {
                if (!nif.isUp() || nif.isLoopback()) {
                    continue;
                }
                for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                    if (a.isLinkLocalAddress()) {
                        continue;
                    }
                    (a instanceof Inet4Address ? v4 : other).add(a);
                }
            }
        } catch (IOException e) {
            // fall through to loopback
        }
        return !v4.isEmpty() ? v4.get(0) : !other.isEmpty() ? other.get(0) : InetAddress.getLoopbackAddress();
    }
}
