package dev.ferry.serve.membership;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/** Member URLs in the order every node agrees on: by address where the host is an IP literal (IPv4 first), then by text. */
final class Urls {
    private Urls() {
    }

    static List<URI> sorted(List<URI> members) {
        return members.stream().distinct().sorted(ORDER).toList();
    }

    static final Comparator<URI> ORDER = (a, b) -> {
        byte[] x = literal(a.getHost());
        byte[] y = literal(b.getHost());
        if (x != null && y != null) {
            int c = x.length != y.length ? Integer.compare(x.length, y.length) : Arrays.compareUnsigned(x, y);
            return c != 0 ? c : Integer.compare(a.getPort(), b.getPort());
        }
        if ((x == null) != (y == null)) {
            return x != null ? -1 : 1;
        }
        return a.toString().compareTo(b.toString());
    };

    /** The bytes of an IP literal host (brackets allowed), or null for a name. */
    static byte[] literal(String host) {
        if (host == null) {
            return null;
        }
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        boolean v4 = h.matches("\\d{1,3}(\\.\\d{1,3}){3}");
        boolean v6 = h.contains(":") && h.matches("[0-9A-Fa-f:.]+");
        if (!v4 && !v6) {
            return null;
        }
        try {
            return InetAddress.getByName(h).getAddress(); // a literal: no lookup
        } catch (UnknownHostException e) {
            return null;
        }
    }
}
