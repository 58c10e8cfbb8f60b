package dev.ferry.serve.membership;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import javax.naming.Context;
import javax.naming.NameNotFoundException;
import javax.naming.NamingEnumeration;
import javax.naming.NamingException;
import javax.naming.directory.Attribute;
import javax.naming.directory.DirContext;
import javax.naming.directory.InitialDirContext;

/**
 * A DNS client that asks a name server every time: the JDK's DNS provider for JNDI ({@code jdk.naming.dns}),
 * not {@link InetAddress#getAllByName}, whose answers the JVM caches for {@code networkaddress.cache.ttl}
 * (30 s by default, set once per JVM) and which cannot be pointed at another server. It asks the servers of
 * {@code /etc/resolv.conf} (a Kubernetes pod's: the cluster DNS; a network namespace's own under {@code ip
 * netns exec}) or the one it is given, and tries a relative name under each {@code search} domain there, as
 * the system resolver would. Thread-safe (a context per lookup).
 */
final class DnsLookup {
    private final String server;

    /** {@code server}: {@code HOST[:PORT]} to ask, or null for the system's name servers. */
    DnsLookup(String server) {
        this.server = server;
    }

    /** The A and AAAA records of {@code name} (empty when the name does not exist); IOException when no server answers. */
    List<InetAddress> lookup(String name) throws IOException {
        List<String> candidates = new ArrayList<>();
        boolean absolute = name.endsWith(".");
        candidates.add(absolute ? name : name + ".");
        if (!absolute) {
            for (String domain : searchDomains()) {
                candidates.add(name + "." + domain + (domain.endsWith(".") ? "" : "."));
            }
        }
        Hashtable<String, String> env = new Hashtable<>();
        env.put(Context.INITIAL_CONTEXT_FACTORY, "com.sun.jndi.dns.DnsContextFactory");
        env.put(Context.PROVIDER_URL, server == null ? "dns:" : "dns://" + server);
        env.put("com.sun.jndi.dns.timeout.initial", "400");
        env.put("com.sun.jndi.dns.timeout.retries", "2");
        DirContext ctx;
        try {
            ctx = new InitialDirContext(env);
        } catch (NamingException e) {
            throw new IOException("cannot start a DNS lookup: " + e.getMessage(), e);
        }
        try {
            for (String candidate : candidates) {
                List<InetAddress> found = records(ctx, candidate);
                if (!found.isEmpty()) {
                    return found;
                }
            }
            return List.of();
        } finally {
            try {
                ctx.close();
            } catch (NamingException ignored) {
                // nothing held
            }
        }
    }

    /**
     * The A, then the AAAA records of {@code name}: one question per type. JNDI asks a question of several types as
     * one of type ANY, which servers may answer with nothing (RFC 8482; podman's aardvark-dns does). A server may also
     * refuse the question of a type the name lacks (dnsmasq with no upstream does): a type that fails fails the lookup
     * only when the other found nothing.
     */
    private static List<InetAddress> records(DirContext ctx, String name) throws IOException {
        List<InetAddress> out = new ArrayList<>();
        NamingException failed = null;
        for (String type : new String[] {"A", "AAAA"}) {
            Attribute a;
            try {
                a = ctx.getAttributes(name, new String[] {type}).get(type);
            } catch (NameNotFoundException e) {
                return out;
            } catch (NamingException e) {
                failed = e;
                continue;
            }
            if (a == null) {
                continue;
            }
            try {
                NamingEnumeration<?> values = a.getAll();
                while (values.hasMore()) {
                    out.add(InetAddress.getByName(values.next().toString().trim())); // a literal: no lookup
                }
            } catch (NamingException | IllegalArgumentException e) {
                throw new IOException("DNS answer for " + name + " unreadable: " + e.getMessage(), e);
            }
        }
        if (out.isEmpty() && failed != null) {
            throw new IOException("DNS lookup of " + name + " failed: " + failed.getMessage(), failed);
        }
        return out;
    }

    /** The {@code search} (or {@code domain}) list of /etc/resolv.conf; empty when there is none. */
    private static List<String> searchDomains() {
        List<String> out = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(Path.of("/etc/resolv.conf"))) {
                String[] w = line.trim().split("\\s+");
                if (w.length > 1 && (w[0].equals("search") || w[0].equals("domain"))) {
                    out.clear();
                    for (int i = 1; i < w.length; i++) {
                        out.add(w[i]);
                    }
                }
            }
        } catch (IOException e) {
            // no resolv.conf: no search domains
        }
        return out;
    }
}
