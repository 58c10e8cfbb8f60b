package dev.ferry.loader;

import dev.ferry.store.ObjectKey;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;

/**
 * WebDataset-style tar shards: writing them (for demos, tests and benchmarks), indexing where each sample
 * starts, and parsing the samples out of a byte range of a shard. A sample is the run of consecutive
 * members whose names share everything before the first '.' of the file name.
 */
public final class TarShards {
    private TarShards() {
    }

    /** The basename of a member: its path up to the first '.' of its file name. */
    static String sampleKey(String name) {
        int slash = name.lastIndexOf('/');
        int dot = name.indexOf('.', slash + 1);
        return dot < 0 ? name : name.substring(0, dot);
    }

    static String extension(String name) {
        int slash = name.lastIndexOf('/');
        int dot = name.indexOf('.', slash + 1);
        return dot < 0 ? "" : name.substring(dot + 1);
    }

    /**
     * Writes samples as a tar shard and returns the sample offsets: {@code samples.size() + 1} ascending
     * positions, each where a sample's first header starts, the last one the end of the last sample's data.
     */
    public static List<Long> write(OutputStream out, Map<String, Map<String, byte[]>> samples) throws IOException {
        List<Long> offsets = new ArrayList<>();
        long position = 0;
        TarArchiveOutputStream tar = new TarArchiveOutputStream(out, 512);
        for (Map.Entry<String, Map<String, byte[]>> sample : samples.entrySet()) {
            offsets.add(position);
            for (Map.Entry<String, byte[]> field : sample.getValue().entrySet()) {
                String name = sample.getKey() + "." + field.getKey();
                if (name.length() >= 100) {
                    throw new IllegalArgumentException("member name longer than 99 characters: " + name);
                }
                TarArchiveEntry entry = new TarArchiveEntry(name);
                entry.setSize(field.getValue().length);
                entry.setModTime(0);
                tar.putArchiveEntry(entry);
                tar.write(field.getValue());
                tar.closeArchiveEntry();
                position += 512 + (field.getValue().length + 511L) / 512 * 512;
            }
        }
        offsets.add(position);
        tar.finish();
        tar.flush();
        return offsets;
    }

    /** Indexes a shard read in full: where each sample starts, and the end of the last one. */
    public static List<Long> index(InputStream shard) throws IOException {
        List<Long> offsets = new ArrayList<>();
        String current = null;
        long end = 0;
        try (TarArchiveInputStream tar = new TarArchiveInputStream(shard)) {
            for (TarArchiveEntry e; (e = tar.getNextEntry()) != null; ) {
                if (!e.isFile()) {
                    continue;
                }
                String key = sampleKey(e.getName());
                if (!key.equals(current)) {
                    offsets.add(end); // a sample starts where the previous member's data ended (headers included)
                    current = key;
                }
                end = tar.getBytesRead() + (e.getSize() + 511) / 512 * 512;
            }
        }
        offsets.add(end);
        return offsets;
    }

    /**
     * Parses the samples in a byte range that starts at a sample's first header. Plain ustar members (the
     * WebDataset norm) are read in place; anything else (pax or GNU long-name headers, base-256 sizes, a bad
     * checksum) goes to commons-compress, which handles every tar dialect or says what is wrong.
     */
    public static List<Sample> parse(ObjectKey shard, byte[] span) throws IOException {
        List<Sample> fast = parseUstar(shard, span);
        return fast != null ? fast : parseAnyTar(shard, span);
    }

    /** The common case without a library: null when the span holds anything but plain ustar file members. */
    static List<Sample> parseUstar(ObjectKey shard, byte[] span) {
        List<Sample> out = new ArrayList<>();
        String current = null;
        Map<String, byte[]> fields = new LinkedHashMap<>();
        int pos = 0;
        while (pos + 512 <= span.length) {
            if (isZeroBlock(span, pos)) {
                break;
            }
            byte type = span[pos + 156];
            if ((type != '0' && type != 0) || (span[pos + 124] & 0x80) != 0 || !checksumOk(span, pos)) {
                return null;
            }
            String name = cString(span, pos, 100);
            if (span[pos + 257] == 'u' && span[pos + 258] == 's' && span[pos + 259] == 't' && span[pos + 260] == 'a' && span[pos + 261] == 'r') {
                String prefix = cString(span, pos + 345, 155);
                if (!prefix.isEmpty()) {
                    name = prefix + "/" + name;
                }
            }
            long size = octal(span, pos + 124, 12);
            if (size < 0 || pos + 512 + size > span.length) {
                return null;
            }
            String key = sampleKey(name);
            if (current != null && !key.equals(current)) {
                out.add(new Sample(shard, current, fields));
                fields = new LinkedHashMap<>();
            }
            current = key;
            fields.put(extension(name), java.util.Arrays.copyOfRange(span, pos + 512, pos + 512 + (int) size));
            pos += 512 + (int) ((size + 511) / 512 * 512);
        }
        if (current != null) {
            out.add(new Sample(shard, current, fields));
        }
        return out;
    }

    private static boolean isZeroBlock(byte[] b, int pos) {
        for (int i = pos; i < pos + 512; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    /** The header checksum: the sum of its bytes with the checksum field taken as spaces. */
    private static boolean checksumOk(byte[] b, int pos) {
        long sum = 0;
        for (int i = 0; i < 512; i++) {
            sum += (i >= 148 && i < 156) ? ' ' : (b[pos + i] & 0xff);
        }
        return sum == octal(b, pos + 148, 8);
    }

    private static long octal(byte[] b, int pos, int len) {
        long v = 0;
        int i = pos;
        int end = pos + len;
        while (i < end && (b[i] == ' ' || b[i] == 0)) {
            i++;
        }
        boolean any = false;
        for (; i < end && b[i] >= '0' && b[i] <= '7'; i++) {
            v = v * 8 + (b[i] - '0');
            any = true;
        }
        return any ? v : -1;
    }

    private static String cString(byte[] b, int pos, int len) {
        int end = pos;
        while (end < pos + len && b[end] != 0) {
            end++;
        }
        return new String(b, pos, end - pos, java.nio.charset.StandardCharsets.UTF_8);
    }

    static List<Sample> parseAnyTar(ObjectKey shard, byte[] span) throws IOException {
        List<Sample> out = new ArrayList<>();
        try (TarArchiveInputStream tar = new TarArchiveInputStream(new ByteArrayInputStream(span))) {
            String current = null;
            Map<String, byte[]> fields = new LinkedHashMap<>();
            for (TarArchiveEntry e; (e = tar.getNextEntry()) != null; ) {
                if (!e.isFile()) {
                    continue;
                }
                String key = sampleKey(e.getName());
                if (current != null && !key.equals(current)) {
                    out.add(new Sample(shard, current, fields));
                    fields = new LinkedHashMap<>();
                }
                current = key;
                fields.put(extension(e.getName()), tar.readNBytes((int) e.getSize()));
            }
            if (current != null) {
                out.add(new Sample(shard, current, fields));
            }
        }
        return out;
    }
}
