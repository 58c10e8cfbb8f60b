package dev.ferry.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The sizes of the parts a multipart upload made an object of, kept with the object by the stores that
 * assemble it themselves (the folder store, write-back's staging), so that a read of one part
 * ({@code GET ?partNumber=N}) knows its bytes. Kept as the attribute {@value #ATTRIBUTE}, run-length encoded
 * ({@code 5242880*7,1234}: seven parts of 5 MiB, then one of 1234 bytes); never a header a client sends or is
 * sent, and never passed on to an S3 upstream (which keeps its own parts). An upload whose sizes do not fit in
 * {@value #MAX_ENCODED} characters keeps none.
 */
public final class PartSizes {
    public static final String ATTRIBUTE = "x-ferry-part-sizes";
    static final int MAX_ENCODED = 4096;

    private PartSizes() {
    }

    /** The part sizes an object's attributes keep, or null. */
    public static List<Long> of(ObjectAttributes attributes) {
        String v = attributes.get(ATTRIBUTE);
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

    /** {@code attributes} keeping {@code sizes} (in place of any kept before; none when they do not fit). */
    public static ObjectAttributes applyTo(ObjectAttributes attributes, List<Long> sizes) {
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
            kept.put(ATTRIBUTE, b.toString());
        }
        return new ObjectAttributes(kept);
    }

    /** {@code attributes} without part sizes (a copy is one part). */
    public static ObjectAttributes strip(ObjectAttributes attributes) {
        if (attributes.get(ATTRIBUTE) == null) {
            return attributes;
        }
        Map<String, String> kept = new TreeMap<>(attributes.headers());
        kept.remove(ATTRIBUTE);
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
