package dev.ferry.settings;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The settings of one command, in order: the rows every command shares ({@code dev.ferry.tier.TierSettings})
 * and the command's own. No key appears twice: a command cannot define a shared setting again. Immutable.
 */
public final class SettingTable {
    private final List<Setting<?>> rows;
    private final Map<String, Setting<?>> byKey;

    private SettingTable(List<Setting<?>> rows) {
        this.rows = List.copyOf(rows);
        Map<String, Setting<?>> m = new LinkedHashMap<>();
        for (Setting<?> s : this.rows) {
            if (m.put(s.key(), s) != null) {
                throw new IllegalStateException("two settings named " + s.key());
            }
        }
        this.byKey = Collections.unmodifiableMap(m);
    }

    /** The rows of {@code parts}, in order. */
    @SafeVarargs
    public static SettingTable of(List<? extends Setting<?>>... parts) {
        List<Setting<?>> rows = new ArrayList<>();
        for (List<? extends Setting<?>> part : parts) {
            rows.addAll(part);
        }
        return new SettingTable(rows);
    }

    /** Every row, in order. */
    public List<Setting<?>> rows() {
        return rows;
    }

    /** The keys, in order. */
    public Set<String> keys() {
        return Collections.unmodifiableSet(new LinkedHashSet<>(byKey.keySet()));
    }

    /** The row of {@code key}, or null. */
    public Setting<?> row(String key) {
        return byKey.get(key);
    }

    public boolean contains(Setting<?> s) {
        return byKey.get(s.key()) == s;
    }

    /** Every setting at its default. */
    public Settings defaults() {
        Map<Setting<?>, Object> v = new LinkedHashMap<>();
        for (Setting<?> s : rows) {
            v.put(s, s.defaultValue());
        }
        return new Settings(this, v);
    }
}
