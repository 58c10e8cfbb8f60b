package dev.ferry.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * One of S3's additional checksums of an object ({@code x-amz-checksum-*}): its algorithm, type and base64
 * value, as S3 computes them (S3 User Guide, "Checking object integrity"):
 * <ul>
 *   <li>{@link Type#FULL_OBJECT}: the checksum of all the object's bytes (a PUT's; a multipart upload's
 *       when it asked for it, CRC algorithms only);
 *   <li>{@link Type#COMPOSITE}: a multipart upload's, the checksum of its parts' binary checksums
 *       concatenated in order, then {@code -N} for N parts (a "checksum of checksums").
 * </ul>
 *
 * <p>Kept with an object as {@link ObjectAttributes}: {@code x-amz-checksum-<algorithm>: value} and
 * {@code x-amz-checksum-type: FULL_OBJECT|COMPOSITE}. A multipart upload in progress keeps what its client
 * declared ({@code x-amz-checksum-algorithm}, and the type), with no value: the store that assembles it
 * computes the value then ({@link #declared}). These headers are never sent back as ordinary object
 * headers: a client asks for them ({@code x-amz-checksum-mode: ENABLED}).
 *
 * @param value the base64 value, with {@code -N} for a composite; null where only the algorithm is known (an upload
 *              that declared it, an object as a listing names it)
 */
public record Checksum(Algorithm algorithm, Type type, String value) {
    /** The header (and attribute) that names a multipart upload's declared algorithm. */
    public static final String ALGORITHM_HEADER = "x-amz-checksum-algorithm";
    /** The header (and attribute) that names the checksum's type. */
    public static final String TYPE_HEADER = "x-amz-checksum-type";
    private static final String PREFIX = "x-amz-checksum-";

    /** S3's checksum algorithms. */
    public enum Algorithm {
        CRC32(4), CRC32C(4), CRC64NVME(8), SHA1(20), SHA256(32);

        private final int bytes;

        Algorithm(int bytes) {
            this.bytes = bytes;
        }

        /** The header that carries a value of this algorithm, {@code x-amz-checksum-crc32} say. */
        public String header() {
            return PREFIX + name().toLowerCase(Locale.ROOT);
        }

        /** The element that carries a value in S3's XML, {@code ChecksumCRC32} say. */
        public String element() {
            return "Checksum" + name();
        }

        /** The length of a value, in bytes. */
        public int bytes() {
            return bytes;
        }

        /** Whether a multipart upload may take a FULL_OBJECT checksum of this algorithm (S3 combines CRCs only). */
        public boolean combines() {
            return this == CRC32 || this == CRC32C || this == CRC64NVME;
        }

        /** The algorithm a name (any case) names, or null. */
        public static Algorithm named(String name) {
            if (name == null) {
                return null;
            }
            for (Algorithm a : values()) {
                if (a.name().equalsIgnoreCase(name.trim())) {
                    return a;
                }
            }
            return null;
        }

        /** The algorithm whose value header this is ({@code x-amz-checksum-sha256}, any case), or null. */
        public static Algorithm ofHeader(String header) {
            String h = header.toLowerCase(Locale.ROOT);
            return h.startsWith(PREFIX) ? named(h.substring(PREFIX.length())) : null;
        }

        /** A fresh running checksum of this algorithm. */
        public Digest digest() {
            return new Digest(this);
        }
    }

    /** Whether a checksum is of all the bytes, or of the parts' checksums. */
    public enum Type {
        FULL_OBJECT, COMPOSITE;

        /** The type a name (any case) names, or null. */
        public static Type named(String name) {
            if (name == null) {
                return null;
            }
            for (Type t : values()) {
                if (t.name().equalsIgnoreCase(name.trim())) {
                    return t;
                }
            }
            return null;
        }
    }

    public Checksum {
        Objects.requireNonNull(algorithm, "algorithm is null");
        Objects.requireNonNull(type, "type is null");
        if (value != null && value.isEmpty()) {
            throw new IllegalArgumentException("value is empty");
        }
    }

    /** The FULL_OBJECT checksum of bytes whose {@code algorithm} value is {@code raw}. */
    public static Checksum full(Algorithm algorithm, byte[] raw) {
        return new Checksum(algorithm, Type.FULL_OBJECT, Base64.getEncoder().encodeToString(raw));
    }

    /** What a multipart upload declared: an algorithm and type whose value its completion computes. */
    public static Checksum declared(Algorithm algorithm, Type type) {
        return new Checksum(algorithm, type, null);
    }

    /** Whether a header (lower case) is one of the checksum's: a value, the type or a declared algorithm. */
    public static boolean isChecksumHeader(String name) {
        return name.equals(TYPE_HEADER) || name.equals(ALGORITHM_HEADER) || Algorithm.ofHeader(name) != null;
    }

    /** The checksum an object's attributes hold (with a value), or null. */
    public static Checksum of(ObjectAttributes attributes) {
        for (Algorithm a : Algorithm.values()) {
            String v = attributes.get(a.header());
            if (v != null && !v.isEmpty()) {
                Type t = Type.named(attributes.get(TYPE_HEADER));
                return new Checksum(a, t != null ? t : v.contains("-") ? Type.COMPOSITE : Type.FULL_OBJECT, v);
            }
        }
        return null;
    }

    /** What an upload in progress declared (value null), or null when it declared nothing. */
    public static Checksum declaredIn(ObjectAttributes attributes) {
        Algorithm a = Algorithm.named(attributes.get(ALGORITHM_HEADER));
        if (a == null) {
            return null;
        }
        Type t = Type.named(attributes.get(TYPE_HEADER));
        return declared(a, t != null ? t : defaultType(a));
    }

    /** The type S3 gives a multipart upload that names only its algorithm: FULL_OBJECT for CRC-64/NVME, else COMPOSITE. */
    public static Type defaultType(Algorithm algorithm) {
        return algorithm == Algorithm.CRC64NVME ? Type.FULL_OBJECT : Type.COMPOSITE;
    }

    /** {@code attributes} without any checksum attribute. */
    public static ObjectAttributes strip(ObjectAttributes attributes) {
        Map<String, String> kept = new TreeMap<>(attributes.headers());
        kept.keySet().removeIf(Checksum::isChecksumHeader);
        return kept.size() == attributes.headers().size() ? attributes : new ObjectAttributes(kept);
    }

    /** {@code attributes} holding this checksum (or declaration) in place of any other. */
    public ObjectAttributes applyTo(ObjectAttributes attributes) {
        Map<String, String> kept = new TreeMap<>(strip(attributes).headers());
        if (value == null) {
            kept.put(ALGORITHM_HEADER, algorithm.name());
        } else {
            kept.put(algorithm.header(), value);
        }
        kept.put(TYPE_HEADER, type.name());
        return new ObjectAttributes(kept);
    }

    /** The value's bytes (without a composite's {@code -N}). */
    public byte[] raw() {
        if (value == null) {
            throw new IllegalStateException("a declared checksum has no value yet");
        }
        int dash = value.indexOf('-');
        return Base64.getDecoder().decode(dash < 0 ? value : value.substring(0, dash));
    }

    /** S3's COMPOSITE checksum of parts whose checksums (FULL_OBJECT, this algorithm, in order) are given. */
    public static Checksum composite(Algorithm algorithm, List<Checksum> parts) {
        Digest d = algorithm.digest();
        for (Checksum p : parts) {
            if (p.algorithm() != algorithm) {
                throw new IllegalArgumentException("a part's checksum is " + p.algorithm() + ", not " + algorithm);
            }
            byte[] raw = p.raw();
            d.update(raw, 0, raw.length);
        }
        return new Checksum(algorithm, Type.COMPOSITE, Base64.getEncoder().encodeToString(d.finish()) + "-" + parts.size());
    }

    /** The FULL_OBJECT checksum of a file's bytes. */
    public static Checksum ofFile(Algorithm algorithm, Path file) throws IOException {
        Digest d = algorithm.digest();
        d.updateFrom(file);
        return full(algorithm, d.finish());
    }

    /** The FULL_OBJECT checksum of a stream's bytes (read to its end, not closed). */
    public static Checksum ofStream(Algorithm algorithm, java.io.InputStream in) throws IOException {
        Digest d = algorithm.digest();
        byte[] buf = new byte[1 << 16];
        for (int n; (n = in.read(buf)) >= 0; ) {
            d.update(buf, 0, n);
        }
        return full(algorithm, d.finish());
    }

    /**
     * A running checksum of one algorithm. Not thread-safe.
     */
    public static final class Digest {
        private final Algorithm algorithm;
        private final java.util.zip.Checksum crc;
        private final MessageDigest sha;

        private Digest(Algorithm algorithm) {
            this.algorithm = algorithm;
            this.crc = switch (algorithm) {
                case CRC32 -> new CRC32();
                case CRC32C -> new CRC32C();
                case CRC64NVME -> new Crc64Nvme();
                default -> null;
            };
            try {
                this.sha = switch (algorithm) {
                    case SHA1 -> MessageDigest.getInstance("SHA-1");
                    case SHA256 -> MessageDigest.getInstance("SHA-256");
                    default -> null;
                };
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(algorithm + " is not available", e);
            }
        }

        public Algorithm algorithm() {
            return algorithm;
        }

        public void update(byte[] b, int off, int len) {
            if (crc != null) {
                crc.update(b, off, len);
            } else {
                sha.update(b, off, len);
            }
        }

        /** Consumes the buffer's remaining bytes. */
        public void update(ByteBuffer b) {
            if (crc != null) {
                crc.update(b);
            } else {
                sha.update(b);
            }
        }

        /** Feeds a whole file. */
        public void updateFrom(Path file) throws IOException {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
                while (ch.read(buf) >= 0) {
                    buf.flip();
                    update(buf);
                    buf.clear();
                }
            }
        }

        /** The checksum's bytes, big-endian, as S3 encodes them; the digest is spent. */
        public byte[] finish() {
            if (sha != null) {
                return sha.digest();
            }
            long v = crc.getValue();
            if (algorithm == Algorithm.CRC64NVME) {
                return ByteBuffer.allocate(8).putLong(v).array();
            }
            return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
        }
    }
}
