package dev.ferry.settings;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tables of settings in docs/configuration.md, read for the tests that check the page against the code
 * (core's tier settings, serve's and mount's tables): each section's rows, key to default cell (a row may name
 * several keys; a default of none is written {@code (none)}).
 */
public final class SettingsDoc {
    private SettingsDoc() {
    }

    /** The rows of the sections whose heading starts with one of {@code headings} ({@code "## `ServeConfig`"}), merged. */
    public static Map<String, String> defaults(String... headings) {
        List<String> lines;
        try {
            lines = Files.readAllLines(page());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> out = new LinkedHashMap<>();
        Pattern key = Pattern.compile("`([a-z-]+)`");
        for (String heading : headings) {
            int start = lines.indexOf(lines.stream().filter(l -> l.startsWith(heading)).findFirst()
                    .orElseThrow(() -> new AssertionError("docs/configuration.md has no section " + heading)));
            for (String line : lines.subList(start + 1, lines.size())) {
                if (line.startsWith("## ")) {
                    break;
                }
                String[] cells = line.split("\\|");
                if (!line.startsWith("| `") || cells.length < 3) {
                    continue;
                }
                for (Matcher m = key.matcher(cells[1]); m.find(); ) {
                    out.put(m.group(1), cells[2].trim());
                }
            }
        }
        return out;
    }

    /** How the page writes a row's default: {@code `10GiB`}, or {@code (none)}. */
    public static String cell(Setting<?> s) {
        return s.defaultText().isEmpty() ? "(none)" : "`" + s.defaultText() + "`";
    }

    private static Path page() {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.exists(dir.resolve("docs/configuration.md"))) {
            dir = dir.getParent();
            if (dir == null) {
                throw new AssertionError("no docs/configuration.md above the working directory");
            }
        }
        return dir.resolve("docs/configuration.md");
    }
}
