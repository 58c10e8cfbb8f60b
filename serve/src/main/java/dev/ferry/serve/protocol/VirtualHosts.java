package dev.ferry.serve.protocol;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Virtual-hosted-style addressing: a request whose {@code Host} is {@code BUCKET.DOMAIN} (any port), for one
 * of the configured domains, addresses that bucket, and its path is the key ({@code GET /k} with
 * {@code Host: data.localhost:9099} is {@code GET /data/k}). Any other Host (an IP address, the bare domain,
 * another name) is path-style. The default domain is {@code localhost}: a name under it never resolves
 * beyond this machine (RFC 6761), so no path-style client is caught by it. Only the routing changes: a
 * signature is checked against the request as sent (its Host and path), as S3 does.
 *
 * <p>Immutable and thread-safe.
 */
public final class VirtualHosts {
    private final List<String> suffixes;

    public VirtualHosts(List<String> domains) {
        this.suffixes = domains.stream().map(d -> "." + d).toList();
    }

    /** The domains of a {@code virtual-host} setting: comma-separated host names, without ports. */
    public static List<String> parse(String setting) {
        List<String> domains = new ArrayList<>();
        for (String part : setting.split(",")) {
            String d = part.trim().toLowerCase(Locale.ROOT);
            if (d.isEmpty()) {
                continue;
            }
            if (d.startsWith(".") || d.endsWith(".") || !d.matches("[a-z0-9.-]+")) {
                throw new IllegalArgumentException("virtual-host takes host names such as localhost or s3.example.internal "
                        + "(no scheme, port or leading dot), not '" + part.trim() + "'");
            }
            domains.add(d);
        }
        return List.copyOf(domains);
    }

    /** The bucket a {@code Host} header names, or null when the request is path-style. */
    public String bucketOf(String host) throws S3Error {
        if (host == null || suffixes.isEmpty()) {
            return null;
        }
        String h = host.trim().toLowerCase(Locale.ROOT);
        if (h.startsWith("[")) {
            return null; // an IPv6 literal
        }
        int colon = h.lastIndexOf(':');
        if (colon >= 0) {
            h = h.substring(0, colon);
        }
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1); // a fully qualified name
        }
        for (String suffix : suffixes) {
            if (h.length() > suffix.length() && h.endsWith(suffix)) {
                return Keys.bucket(h.substring(0, h.length() - suffix.length()));
            }
        }
        return null;
    }
}
