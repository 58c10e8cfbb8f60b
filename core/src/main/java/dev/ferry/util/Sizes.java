package dev.ferry.util;

import java.util.Locale;

/** Byte sizes as people write them: {@code 1048576}, {@code 500MB}, {@code 4MiB}, {@code 1.5GiB}, {@code 2TB}. */
public final class Sizes {
    private Sizes() {
    }

    /** Parses a size; decimal units (KB, MB, GB, TB) are powers of 1000, binary ones (KiB...) of 1024. */
    public static long parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("size is empty");
        }
        String s = text.strip();
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
            i++;
        }
        String number = s.substring(0, i);
        String unit = s.substring(i).strip().toLowerCase(Locale.ROOT);
        double value;
        try {
            value = Double.parseDouble(number);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("size '" + text + "' does not start with a number");
        }
        long multiplier = switch (unit) {
            case "", "b" -> 1L;
            case "k", "kb" -> 1000L;
            case "kib" -> 1L << 10;
            case "m", "mb" -> 1000_000L;
            case "mib" -> 1L << 20;
            case "g", "gb" -> 1000_000_000L;
            case "gib" -> 1L << 30;
            case "t", "tb" -> 1000_000_000_000L;
            case "tib" -> 1L << 40;
            case "p", "pb" -> 1000_000_000_000_000L;
            case "pib" -> 1L << 50;
            default -> throw new IllegalArgumentException("size '" + text + "' has an unknown unit '" + unit
                    + "': use B, KB, MB, GB, TB, PB or KiB, MiB, GiB, TiB, PiB");
        };
        double bytes = value * multiplier;
        if (bytes > Long.MAX_VALUE) {
            throw new IllegalArgumentException("size '" + text + "' is too large");
        }
        return Math.round(bytes);
    }

    /** A size for people: {@code 1.5 GiB}. */
    public static String format(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
