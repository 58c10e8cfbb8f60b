package dev.ferry.sim;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a trace: one access per line, {@code KEY SIZE_BYTES} separated by whitespace; blank lines and lines
 * starting with {@code #} are skipped. A bad line stops the parse with its number and what is wrong.
 */
public final class TraceParser {
    private TraceParser() {
    }

    /** Thrown for a line that is not {@code KEY SIZE_BYTES}. */
    public static final class BadTraceException extends IOException {
        private static final long serialVersionUID = 1L;

        BadTraceException(String message) {
            super(message);
        }
    }

    public static List<Access> parse(Path file) throws IOException {
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return parse(in, file.toString());
        }
    }

    public static List<Access> parse(BufferedReader in, String name) throws IOException {
        List<Access> accesses = new ArrayList<>();
        String line;
        int number = 0;
        while ((line = in.readLine()) != null) {
            number++;
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            String[] fields = trimmed.split("\\s+");
            if (fields.length != 2) {
                throw new BadTraceException(name + " line " + number + ": expected 'KEY SIZE_BYTES', found "
                        + fields.length + " field" + (fields.length == 1 ? "" : "s") + ": '" + abbreviate(trimmed) + "'");
            }
            long size;
            try {
                size = Long.parseLong(fields[1]);
            } catch (NumberFormatException e) {
                throw new BadTraceException(name + " line " + number + ": size '" + abbreviate(fields[1]) + "' is not a whole number of bytes");
            }
            if (size < 0) {
                throw new BadTraceException(name + " line " + number + ": size " + size + " is negative");
            }
            accesses.add(new Access(fields[0], size));
        }
        return accesses;
    }

    private static String abbreviate(String s) {
        return s.length() <= 60 ? s : s.substring(0, 57) + "...";
    }
}
