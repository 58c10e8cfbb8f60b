package dev.ferry.store;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the stores that assemble a multipart upload themselves (the folder store, write-back's staging) keep of
 * its parts, so that a read of one part ({@code GET ?partNumber=N}) knows its bytes and GetObjectAttributes can list
 * them: their sizes, as the attribute {@value #SIZES}, run-length encoded ({@code 5242880*7,1234}: seven parts of
 * 5 MiB, then one of 1234 bytes); and, for an upload that declared a checksum algorithm, each part's checksum
 * (base64, of that algorithm), as {@value #CHECKSUMS}, comma-separated. Never a header a client sends or is sent,
 * never passed on to an S3 upstream (which keeps its own parts). Sizes that do not fit in {@value #MAX_ENCODED}
 * characters are not kept, nor checksums that do not (and checksums only with the sizes).
 */
public final class Parts {
    public static final String SIZES = "x-ferry-part-sizes";
    public static final String CHECKSUMS = "x-ferry-part-checksums";
    static final int MAX_ENCODED = 4096;

    private Parts() {
    }

    /** Whether an attribute (lower case) is one of these. */
    static boolean isPartsAttribute(String name) {
        return name.equals(SIZES) || name.equals(CHECKSUMS);
    }

    /** The part sizes an object's attributes keep, or null. */
    public static List<Long> sizes(ObjectAttributes attributes) {
        String v = attributes.get(SIZES);
        if (v == null) {
            return null;
        }
        try {
            List<Long> sizes = new ArrayList<>();
            for (String run : v.split(",")) {
                int star = run.indexOf('*');
                long size = Long.parseLong(star < 0 ? run : run.substring(0, star));
                int count = star < 0 ? 1 : Integer.parseInt(run.substring(star + 1));
                if (size < 0 || count < 1 || sizes.size() + count > CompletedPart.MAX_PARTS) {
                    return null;
                }
                for (int i = 0; i < count; i++) {
                    sizes.add(size);
                }
            }
            return sizes;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The part checksums an object's attributes keep (FULL_OBJECT, of its checksum's algorithm), or null. */
    public static List<Checksum> checksums(ObjectAttributes attributes) {
        String v = attributes.get(CHECKSUMS);
        Checksum object = Checksum.of(attributes);
        if (v == null || object == null) {
            return null;
        }
        return Arrays.stream(v.split(",")).map(c -> new Checksum(object.algorithm(), Checksum.Type.FULL_OBJECT, c)).toList();
    }

    /**
     * {@code attributes} keeping {@code sizes} and, when not null, the parts' {@code checksums}, in place of any
     * kept before (none of either that does not fit).
     */
    public static ObjectAttributes applyTo(ObjectAttributes attributes, List<Long> sizes, List<Checksum> checksums) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < sizes.size(); ) {
            int j = i;
            while (j < sizes.size() && sizes.get(j).equals(sizes.get(i))) {
                j++;
            }
            if (!b.isEmpty()) {
                b.append(',');
            }
            b.append(sizes.get(i));
            if (j - i > 1) {
                b.append('*').append(j - i);
            }
            i = j;
        }
        Map<String, String> kept = new TreeMap<>(strip(attributes).headers());
        if (b.length() <= MAX_ENCODED && !sizes.isEmpty()) {
            kept.put(SIZES, b.toString());
            if (checksums != null && checksums.size() == sizes.size()) {
                String sums = String.join(",", checksums.stream().map(Checksum::value).toList());
                if (sums.length() <= MAX_ENCODED) {
                    kept.put(CHECKSUMS, sums);
                }
            }
        }
        return new ObjectAttributes(kept);
    }

    /** {@code attributes} without any of these (a copy is one part). */
    public static ObjectAttributes strip(ObjectAttributes attributes) {
        if (attributes.get(SIZES) == null && attributes.get(CHECKSUMS) == null) {
            return attributes;
        }
        Map<String, String> kept = new TreeMap<>(attributes.headers());
        kept.keySet().removeIf(Parts::isPartsAttribute);
        return new ObjectAttributes(kept);
    }

    /** Part {@code partNumber}'s bytes (1-based) among {@code sizes}, or null when there is no such part or it is empty. */
    public static ByteRange range(List<Long> sizes, int partNumber) {
        if (partNumber < 1 || partNumber > sizes.size()) {
            return null;
        }
        long offset = 0;
        for (int i = 0; i < partNumber - 1; i++) {
            offset += sizes.get(i);
        }
        long length = sizes.get(partNumber - 1);
        return length == 0 ? null : ByteRange.of(offset, length);
    }
}
