package dev.ferry.cli;

import dev.ferry.settings.Setting;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A command's flags made from a table of settings ({@code ServeConfig}'s, {@code MountConfig}'s): a flag
 * {@code --KEY} for every row that has one, with the row's parameter label and description, so the table is the
 * one place a setting is defined.
 */
final class SettingFlags {
    private SettingFlags() {
    }

    /** Adds the flag of every row of {@code rows} that has one to {@code spec}. */
    static void add(CommandSpec spec, List<Setting<?>> rows) {
        for (Setting<?> setting : rows) {
            if (!setting.isFlag()) {
                continue;
            }
            OptionSpec.Builder option = OptionSpec.builder("--" + setting.key()).description(setting.description());
            if (setting.isSwitch()) {
                option.type(boolean.class);
            } else {
                option.type(String.class).paramLabel(setting.paramLabel());
            }
            spec.addOption(option.build());
        }
    }

    /** The flags of {@code rows} given on the command line, as {@code key: value} settings (a switch given: true). */
    static Map<String, String> given(CommandSpec spec, List<Setting<?>> rows) {
        Map<String, String> settings = new LinkedHashMap<>();
        for (Setting<?> setting : rows) {
            if (setting.isFlag()) {
                Object value = spec.findOption("--" + setting.key()).getValue();
                if (setting.isSwitch() ? Boolean.TRUE.equals(value) : value != null) {
                    settings.put(setting.key(), value.toString());
                }
            }
        }
        return settings;
    }
}
