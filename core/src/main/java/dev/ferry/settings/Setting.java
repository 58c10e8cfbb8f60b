package dev.ferry.settings;

import java.nio.file.Path;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One row of a table of settings: a key of the config file (and, unless {@link #isFlag()} is false, the flag
 * {@code --KEY}), what the flag's value is called, the codec that reads and prints the value, the default as a
 * config file and docs/configuration.md write it, and the one-line description (the flag's help). Rows are
 * compared by identity: one row is one setting, whichever tables hold it. Immutable.
 */
public final class Setting<T> {
    private static final Pattern KEY = Pattern.compile("[a-z][a-z0-9-]*");

    private final String key;
    private final String paramLabel;
    private final boolean flag;
    private final Codec<T> codec;
    private final String defaultText;
    private final String description;

    private Setting(String key, String paramLabel, boolean flag, Codec<T> codec, String defaultText, String description) {
        this.key = Objects.requireNonNull(key, "key is null");
        if (!KEY.matcher(key).matches()) {
            throw new IllegalArgumentException("key must be lowercase words joined by '-': " + key);
        }
        this.paramLabel = paramLabel;
        this.flag = flag;
        this.codec = Objects.requireNonNull(codec, "codec is null");
        this.defaultText = Objects.requireNonNull(defaultText, "defaultText is null");
        this.description = Objects.requireNonNull(description, "description is null");
    }

    /** A setting that is a flag taking a value ({@code --cache-size SIZE}) and a key of the file. */
    public static <T> Setting<T> flag(String key, String paramLabel, Codec<T> codec, String defaultText, String description) {
        return new Setting<>(key, Objects.requireNonNull(paramLabel, "paramLabel is null"), true, codec, defaultText, description);
    }

    /** A setting that is a flag without a value ({@code --insecure}: true when given) and a key of the file; default false. */
    public static Setting<Boolean> toggle(String key, String description) {
        return new Setting<>(key, null, true, Codec.BOOL, "false", description);
    }

    /** A setting of the file only (limits not worth a flag). */
    public static <T> Setting<T> fileOnly(String key, Codec<T> codec, String defaultText, String description) {
        return new Setting<>(key, null, false, codec, defaultText, description);
    }

    /** The key of the config file; the flag is {@code --} and this. */
    public String key() {
        return key;
    }

    /** Whether the command has a flag for it ({@code --KEY}); false for keys of the file only. */
    public boolean isFlag() {
        return flag;
    }

    /** Whether the flag takes no value: given, it sets the setting to true. */
    public boolean isSwitch() {
        return flag && paramLabel == null;
    }

    /** What the flag's value is called in the help ({@code SIZE}); null for a switch or a key of the file only. */
    public String paramLabel() {
        return paramLabel;
    }

    /** The default as a config file would write it ({@code 10GiB}, {@code ~/.ferry/data}); empty: none. */
    public String defaultText() {
        return defaultText;
    }

    /** One line on what it does: the flag's help. */
    public String description() {
        return description;
    }

    /** Reads {@code text}; bad text is refused with one sentence that names the key. */
    public T parse(String text) {
        try {
            return codec.parse().apply(key, text);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(key + " must be a number (sizes may say 64MiB), not '" + text + "'");
        }
    }

    /** The value as a config file would write it; empty for none. */
    @SuppressWarnings("unchecked")
    public String format(Object value) {
        return value == null ? "" : codec.format().apply((T) value);
    }

    /** The default read as a value: {@code ~/} is the user's home (in defaults only, never in what users write). */
    public T defaultValue() {
        String text = defaultText.startsWith("~/") ? Path.of(System.getProperty("user.home")).resolve(defaultText.substring(2)).toString()
                : defaultText;
        return parse(text);
    }

    @Override
    public String toString() {
        return key;
    }
}
