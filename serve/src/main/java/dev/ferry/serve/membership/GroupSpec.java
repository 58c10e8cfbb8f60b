package dev.ferry.serve.membership;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code --group} says, by its form: a static list of daemon URLs ({@code http://10.0.0.1:9099,...}),
 * the addresses of a DNS name ({@code dns:NAME:PORT}, e.g. a Kubernetes headless Service; {@code
 * dns://SERVER[:PORT]/NAME:PORT} asks that DNS server instead of the system's), or the keys under a prefix
 * in etcd ({@code etcd:http://HOST:2379/PREFIX}). Immutable.
 */
public sealed interface GroupSpec {
    /** The spec as {@code --group} writes it. */
    String text();

    /** Every member listed by hand, in the same order on every node. */
    record Static(List<URI> members) implements GroupSpec {
        public Static {
            if (members.isEmpty()) {
                throw new IllegalArgumentException("a group needs at least one member");
            }
            if (new HashSet<>(members).size() != members.size()) {
                throw new IllegalArgumentException("the group lists a member twice: " + members);
            }
            members = List.copyOf(members);
        }

        @Override
        public String text() {
            return String.join(",", members.stream().map(URI::toString).toList());
        }
    }

    /** The A and AAAA records of {@code name}, each a daemon on {@code port}; {@code server} null: the system's resolvers. */
    record Dns(String name, int port, String server) implements GroupSpec {
        public Dns {
            Objects.requireNonNull(name, "name is null");
            if (!name.matches("[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_.])?")) {
                throw new IllegalArgumentException("group: '" + name + "' is not a DNS name");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("group: the port of a dns: group must be 1 to 65535, not " + port);
            }
        }

        @Override
        public String text() {
            return (server == null ? "dns:" : "dns://" + server + "/") + name + ":" + port;
        }
    }

    /** The members registered under {@code prefix} in the etcd cluster at {@code endpoint} (its v3 JSON gateway). */
    record Etcd(URI endpoint, String prefix) implements GroupSpec {
        public Etcd {
            Objects.requireNonNull(endpoint, "endpoint is null");
            if (prefix == null || prefix.isEmpty() || prefix.equals("/")) {
                throw new IllegalArgumentException("group: an etcd: group needs a key prefix, e.g. etcd:http://etcd:2379/ferry/train");
            }
        }

        @Override
        public String text() {
            return "etcd:" + endpoint + prefix;
        }
    }

    /** Reads {@code --group}: null for an empty value (no group). */
    static GroupSpec parse(String text) {
        String v = text == null ? "" : text.trim();
        if (v.isEmpty()) {
            return null;
        }
        if (v.startsWith("dns:")) {
            return dns(v.substring(4));
        }
        if (v.startsWith("etcd:")) {
            return etcd(v.substring(5));
        }
        List<URI> members = new ArrayList<>();
        for (String u : v.split(",")) {
            if (!u.isBlank()) {
                members.add(url(u.trim()));
            }
        }
        return new Static(members);
    }

    private static Dns dns(String rest) {
        String server = null;
        if (rest.startsWith("//")) {
            int slash = rest.indexOf('/', 2);
            if (slash < 0) {
                throw new IllegalArgumentException("group: dns://SERVER/NAME:PORT needs a name after the server, not 'dns:" + rest + "'");
            }
            server = rest.substring(2, slash);
            rest = rest.substring(slash + 1);
        }
        Matcher m = Pattern.compile("(.+):(\\d{1,5})").matcher(rest);
        if (!m.matches()) {
            throw new IllegalArgumentException("group: a dns: group is dns:NAME:PORT (e.g. dns:ferry.ml.svc.cluster.local:9099), not 'dns:"
                    + rest + "'");
        }
        return new Dns(m.group(1), Integer.parseInt(m.group(2)), server);
    }

    private static Etcd etcd(String rest) {
        URI u;
        try {
            u = URI.create(rest);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("group: an etcd: group is etcd:http://HOST:2379/PREFIX, not 'etcd:" + rest + "'");
        }
        if (u.getScheme() == null || !(u.getScheme().equals("http") || u.getScheme().equals("https")) || u.getHost() == null
                || u.getRawPath() == null) {
            throw new IllegalArgumentException("group: an etcd: group is etcd:http://HOST:2379/PREFIX, not 'etcd:" + rest + "'");
        }
        String prefix = u.getRawPath();
        return new Etcd(URI.create(u.getScheme() + "://" + u.getRawAuthority()), prefix.endsWith("/") ? prefix : prefix + "/");
    }

    /** An http:// or https:// URL with a host. */
    static URI url(String v) {
        URI u = null;
        try {
            u = URI.create(v);
        } catch (IllegalArgumentException e) {
            // said below
        }
        if (u == null || u.getScheme() == null || !(u.getScheme().equals("http") || u.getScheme().equals("https")) || u.getHost() == null) {
            throw new IllegalArgumentException("group members are http:// or https:// URLs, not '" + v + "' (or dns:NAME:PORT, "
                    + "or etcd:http://HOST:2379/PREFIX)");
        }
        return u;
    }
}
