package dev.ferry.settings;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;

/** The values of a {@link SettingTable}'s rows (null: none). Immutable and thread-safe. */
public final class Settings {
    private final SettingTable table;
    private final Map<Setting<?>, Object> values;

    Settings(SettingTable table, Map<Setting<?>, Object> values) {
        this.table = table;
        this.values = Collections.unmodifiableMap(values);
    }

    public SettingTable table() {
        return table;
    }

    /** The value of {@code s}, a row of this table. */
    @SuppressWarnings("unchecked")
    public <T> T get(Setting<T> s) {
        if (!table.contains(s)) {
            throw new IllegalArgumentException("no setting " + s.key() + " in this table");
        }
        return (T) values.get(s);
    }

    /** Applies {@code key: value} settings (from a file or from flags) over these; an unknown key is refused, naming the known ones. */
    public Settings with(Map<String, String> settings) {
        Map<Setting<?>, Object> v = new LinkedHashMap<>(values);
        for (Map.Entry<String, String> e : settings.entrySet()) {
            Setting<?> s = table.row(e.getKey());
            if (s == null) {
                throw new IllegalArgumentException("unknown setting '" + e.getKey() + "'; known: " + String.join(", ", new TreeSet<>(table.keys())));
            }
            v.put(s, s.parse(e.getValue()));
        }
        return new Settings(table, v);
    }

    /** The settings as key/value text, as a config file would hold them (secrets hidden), in the table's order. */
    public Map<String, String> describe() {
        Map<String, String> m = new LinkedHashMap<>();
        for (Setting<?> s : table.rows()) {
            m.put(s.key(), s.format(values.get(s)));
        }
        return m;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Settings s && s.table == table && s.values.equals(values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    @Override
    public String toString() {
        return describe().toString();
    }
}
