package dev.ferry.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.settings.Setting;
import dev.ferry.settings.SettingTable;
import dev.ferry.settings.Settings;
import dev.ferry.settings.SettingsDoc;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The tier settings every front end shares: documented defaults, one sentence for bad values. */
class TierSettingsTest {
    @Test
    void defaultsAreTheDocumentedOnes() {
        Map<String, String> d = SettingTable.of(TierSettings.ALL).defaults().describe();
        assertThat(d).containsExactly(Map.entry("upstream", ""), Map.entry("store-root", ""), Map.entry("cache-size", "10.0 GiB"),
                Map.entry("block-size", "4.0 MiB"), Map.entry("verify", "on-load"), Map.entry("write-back-quota", "8.0 GiB"),
                Map.entry("write-settle-window", "15m"), Map.entry("first-byte-timeout", "10s"), Map.entry("read-stall-timeout", "20s"), Map.entry("metadata-ttl", "60s"), Map.entry("read-ahead-folders", "true"),
                Map.entry("read-ahead", "256.0 MiB"));
    }

    @Test
    void everyTierSetting_isInTheDocsTable_withItsDefault() {
        Map<String, String> documented = SettingsDoc.defaults("## Tier settings");
        for (Setting<?> s : TierSettings.ALL) {
            assertThat(documented).as("docs/configuration.md, the tier settings' table").containsEntry(s.key(), SettingsDoc.cell(s));
        }
        assertThat(documented.keySet()).as("rows of the tier settings' table that are no tier setting")
                .isSubsetOf(TierSettings.ALL.stream().map(Setting::key).collect(Collectors.toSet()));
    }

    @Test
    void aDescriptionThatNamesADefault_namesTheRows() {
        for (Setting<?> s : TierSettings.ALL) {
            assertThat(s.description()).as(s.key()).isNotBlank().doesNotContain("\n");
            if (s.description().contains("default")) {
                assertThat(s.description()).as(s.key()).contains(s.defaultText());
            }
        }
    }

    @Test
    void badValues_areOneSentenceNamingTheKey() {
        Settings d = SettingTable.of(TierSettings.ALL).defaults();
        TierSettings.validate(d);
        assertThatThrownBy(() -> TierSettings.validate(d.with(Map.of("block-size", "1KiB")))).hasMessage("block-size must be at least 4KiB: 1024");
        assertThatThrownBy(() -> TierSettings.validate(d.with(Map.of("first-byte-timeout", "0")))).hasMessage("first-byte-timeout must be positive: 0s");
        assertThatThrownBy(() -> TierSettings.validate(d.with(Map.of("write-back-quota", "0")))).hasMessage("write-back-quota must be positive: 0");
        assertThatThrownBy(() -> d.with(Map.of("verify", "sometimes"))).hasMessageStartingWith("verify must be one of on-load");
        assertThat(d.with(Map.of("metadata-ttl", "1h")).get(TierSettings.METADATA_TTL)).hasHours(1);
    }
}
