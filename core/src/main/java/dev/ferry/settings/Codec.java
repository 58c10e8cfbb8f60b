package dev.ferry.settings;

import dev.ferry.util.Sizes;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a setting's text becomes its value and back. {@code parse} is given the key, so that bad input is refused
 * with one sentence naming it ({@code "cache-size must be a size such as 4MiB or 10GiB, not 'lots'"}); an empty
 * value means none where a codec allows none. The one grammar of sizes ({@link Sizes}) and durations
 * ({@code 500ms}, {@code 10s}, {@code 2m}, {@code 12h}, {@code 7d}; a bare number is seconds) for every command.
 * Immutable.
 */
public record Codec<T>(BiFunction<String, String, T> parse, Function<T, String> format) {
    public static final Codec<String> TEXT = new Codec<>((k, v) -> v, s -> s);
    public static final Codec<String> WORD = new Codec<>((k, v) -> v.trim(), s -> s);
    public static final Codec<String> OPTIONAL_TEXT = new Codec<>((k, v) -> v.isBlank() ? null : v.trim(), s -> s);
    /** Text printed as {@code (set)}: secrets are never shown. */
    public static final Codec<String> SECRET = new Codec<>((k, v) -> v.isBlank() ? null : v.trim(), s -> "(set)");
    public static final Codec<Integer> INT = new Codec<>(Codec::integer, i -> Integer.toString(i));
    public static final Codec<Long> SIZE = new Codec<>(Codec::size, Sizes::format);
    /** A size below 2 GiB. */
    public static final Codec<Integer> INT_SIZE = new Codec<>(Codec::intSize, i -> Sizes.format(i));
    /** A size read as {@link #INT_SIZE} reads it, printed as a plain number of bytes. */
    public static final Codec<Integer> INT_BYTES = new Codec<>(Codec::intSize, i -> Integer.toString(i));
    public static final Codec<Boolean> BOOL = new Codec<>(Codec::bool, b -> Boolean.toString(b));
    public static final Codec<Duration> DURATION = new Codec<>(Codec::duration, Codec::format);
    /** What {@link #TTL} reads {@code indefinite} as: the longest time a count of nanoseconds holds (about 292 years). */
    public static final Duration INDEFINITE = Duration.ofNanos(Long.MAX_VALUE);
    /**
     * How long to trust what was read: a duration as {@link #DURATION} reads it, or {@code indefinite}
     * ({@link #INDEFINITE}) for data that never changes behind ferry's back.
     */
    public static final Codec<Duration> TTL = new Codec<>(Codec::ttl, d -> d.equals(INDEFINITE) ? "indefinite" : format(d));
    public static final Codec<Path> PATH = new Codec<>((k, v) -> Path.of(v.trim()), Path::toString);
    public static final Codec<Path> OPTIONAL_PATH = new Codec<>((k, v) -> v.isBlank() ? null : Path.of(v.trim()), Path::toString);
    /** An {@code http://} or {@code https://} URL with a host, or none. */
    /** A URL; printed (in a described config, a status answer) with any {@code user:password} in it masked. */
    public static final Codec<URI> URL = new Codec<>((k, v) -> v.isBlank() ? null : url(k, v.trim()), dev.ferry.util.Secrets::shown);

    public Codec {
        Objects.requireNonNull(parse, "parse is null");
        Objects.requireNonNull(format, "format is null");
    }

    private static int integer(String key, String v) {
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a number, not '" + v + "'");
        }
    }

    private static long size(String key, String v) {
        try {
            return Sizes.parse(v.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(key + " must be a size such as 4MiB or 10GiB, not '" + v + "'");
        }
    }

    private static int intSize(String key, String v) {
        long n = size(key, v);
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(key + " must be below 2GiB, not '" + v + "'");
        }
        return (int) n;
    }

    private static final Pattern DURATION_TEXT = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)?");

    /** {@code 10s}, {@code 1500ms}, {@code 2m}, {@code 12h}, {@code 7d}; a bare number is seconds. */
    private static Duration duration(String key, String v) {
        Matcher m = DURATION_TEXT.matcher(v.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException(key + " must be a duration such as 10s, 500ms, 2m, 12h or 7d, not '" + v + "'");
        }
        double n = Double.parseDouble(m.group(1));
        double unit = switch (m.group(2) == null ? "s" : m.group(2)) {
            case "ms" -> 1;
            case "m" -> 60_000;
            case "h" -> 3_600_000;
            case "d" -> 86_400_000;
            default -> 1000;
        };
        return Duration.ofMillis(Math.round(n * unit));
    }

    private static Duration ttl(String key, String v) {
        if (v.trim().equalsIgnoreCase("indefinite")) {
            return INDEFINITE;
        }
        try {
            return duration(key, v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(key + " must be a duration such as 60s, 10m or 12h, or indefinite, not '" + v + "'");
        }
    }

    /** A duration as {@link #DURATION} reads it, in the largest unit that holds it exactly. */
    private static String format(Duration d) {
        long ms = d.toMillis();
        if (ms == 0) {
            return "0s";
        }
        if (ms % 86_400_000 == 0) {
            return ms / 86_400_000 + "d";
        }
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0 && ms >= 600_000) {
            return ms / 60_000 + "m";
        }
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }

    private static boolean bool(String key, String v) {
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on", "1" -> true;
            case "false", "no", "off", "0" -> false;
            default -> throw new IllegalArgumentException(key + " must be true or false, not '" + v + "'");
        };
    }

    private static URI url(String key, String v) {
        URI u;
        try {
            u = URI.create(v);
        } catch (IllegalArgumentException e) {
            u = null;
        }
        if (u == null || u.getScheme() == null || !(u.getScheme().equals("http") || u.getScheme().equals("https")) || u.getHost() == null) {
            throw new IllegalArgumentException(key + " must be a URL, http:// or https://, such as https://s3.eu-west-1.amazonaws.com or http://10.0.0.5:9099, not '"
                    + v + "'");
        }
        return u;
    }
}
