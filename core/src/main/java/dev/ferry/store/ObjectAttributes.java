package dev.ferry.store;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What a client said about an object besides its bytes, kept with it and returned on every read: the
 * standard headers ({@code Content-Type}, {@code Content-Encoding}, {@code Cache-Control},
 * {@code Content-Disposition}, {@code Content-Language}, {@code Expires}) and user metadata
 * ({@code x-amz-meta-*}), by lower-case header name. S3 keeps the same set. An object's additional checksum
 * ({@link Checksum}) is kept here too, under its {@code x-amz-checksum-*} names: not a header the object is
 * served with, but what S3 answers when asked for it; and so are the sizes of the parts the object was uploaded
 * in, where a store knows them ({@link Parts}).
 *
 * <p>User metadata is limited to 2 KiB (names and values), as in S3.
 */
public record ObjectAttributes(Map<String, String> headers) {
    public static final ObjectAttributes NONE = new ObjectAttributes(Map.of());
    public static final String USER_PREFIX = "x-amz-meta-";
    public static final int MAX_USER_BYTES = 2048;
    /** The standard headers an object keeps, lower case. */
    public static final Set<String> STANDARD = Set.of("content-type", "content-encoding", "cache-control", "content-disposition",
            "content-language", "expires");

    public ObjectAttributes {
        TreeMap<String, String> copy = new TreeMap<>();
        int userBytes = 0;
        for (Map.Entry<String, String> e : headers.entrySet()) {
            String name = e.getKey().toLowerCase(Locale.ROOT);
            if (!isKept(name)) {
                throw new IllegalArgumentException("header " + e.getKey() + " is not kept with an object");
            }
            if (e.getValue() == null) {
                throw new IllegalArgumentException("header " + e.getKey() + " has no value");
            }
            if (name.startsWith(USER_PREFIX)) {
                userBytes += (name.length() - USER_PREFIX.length()) + e.getValue().getBytes(StandardCharsets.UTF_8).length;
            }
            copy.put(name, e.getValue());
        }
        if (userBytes > MAX_USER_BYTES) {
            throw new IllegalArgumentException("user metadata is " + userBytes + " bytes, over the limit of " + MAX_USER_BYTES);
        }
        headers = Collections.unmodifiableSortedMap(copy);
    }

    /** Whether a header (any case) is one an object keeps. */
    public static boolean isKept(String header) {
        String name = header.toLowerCase(Locale.ROOT);
        return isObjectHeader(name) || Checksum.isChecksumHeader(name) || Parts.isPartsAttribute(name);
    }

    /**
     * Whether a kept attribute (lower case) is one of the object's own headers, taken from a write and sent with
     * every read: not its checksum (sent when asked for), not what ferry keeps for itself ({@link Parts}).
     */
    public static boolean isObjectHeader(String name) {
        return STANDARD.contains(name) || (name.startsWith(USER_PREFIX) && name.length() > USER_PREFIX.length());
    }

    public boolean isEmpty() {
        return headers.isEmpty();
    }

    /** The value of a kept header (lower-case name), or null. */
    public String get(String name) {
        return headers.get(name);
    }

    /** User metadata by name without the {@code x-amz-meta-} prefix. */
    public Map<String, String> userMetadata() {
        TreeMap<String, String> m = new TreeMap<>();
        headers.forEach((k, v) -> {
            if (k.startsWith(USER_PREFIX)) {
                m.put(k.substring(USER_PREFIX.length()), v);
            }
        });
        return m;
    }

    public void writeTo(DataOutputStream out) throws IOException {
        out.writeInt(headers.size());
        for (Map.Entry<String, String> e : headers.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeUTF(e.getValue());
        }
    }

    public static ObjectAttributes readFrom(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > 1000) {
            throw new IOException("not an attribute count: " + n);
        }
        TreeMap<String, String> m = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            m.put(in.readUTF(), in.readUTF());
        }
        return new ObjectAttributes(m);
    }
}
