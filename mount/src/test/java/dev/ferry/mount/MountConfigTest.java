package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.settings.Codec;
import dev.ferry.settings.Setting;
import dev.ferry.settings.SettingsDoc;
import dev.ferry.tier.TierSettings;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** ferry mount's table: the tier settings the daemon has too, plus its own, documented with their defaults. */
class MountConfigTest {
    private static MountConfig config(Map<String, String> extra) {
        Map<String, String> s = new java.util.HashMap<>(Map.of("mountpoint", "/mnt/x", "store-root", "/data"));
        s.putAll(extra);
        return MountConfig.from(s);
    }

    @Test
    void everyKey_isInTheDocsTable_withItsDefault() {
        Map<String, String> documented = SettingsDoc.defaults("## Tier settings", "## `MountConfig`");
        for (Setting<?> s : MountConfig.settings()) {
            assertThat(documented).as("docs/configuration.md, MountConfig's table").containsEntry(s.key(), SettingsDoc.cell(s));
        }
        assertThat(SettingsDoc.defaults("## `MountConfig`").keySet()).as("rows of MountConfig's table in the docs that are no setting")
                .isSubsetOf(MountConfig.KEYS);
        for (Setting<?> s : MountConfig.settings()) {
            assertThat(s.description()).as(s.key()).isNotBlank().doesNotContain("\n");
            if (s.description().contains("default")) {
                assertThat(s.description()).as(s.key()).contains(s.defaultText());
            }
        }
    }

    @Test
    void theTierSettings_areTheDaemonsRows_withTheSameDefaults() {
        assertThat(MountConfig.settings()).containsAll(TierSettings.ROWS).contains(TierSettings.READ_AHEAD);
        MountConfig c = config(Map.of());
        assertThat(c.writeBackQuota()).as("one write-back quota default for serve and mount").isEqualTo(8L << 30);
        assertThat(c.firstByteTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.flushTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(c.verify()).isEqualTo(dev.ferry.cache.VerifyMode.ON_LOAD);
    }

    @Test
    void durations_takeHoursAndDays_asTheDaemonsDo() {
        assertThat(config(Map.of("flush-timeout", "1h", "metadata-ttl", "1d")).flushTimeout()).isEqualTo(Duration.ofHours(1));
        assertThat(config(Map.of("metadata-ttl", "1d")).metadataTtl()).isEqualTo(Duration.ofDays(1));
        assertThat(config(Map.of("metadata-ttl", "indefinite")).metadataTtl()).isEqualTo(Codec.INDEFINITE);
        assertThat(Mount.kernelTimeout(config(Map.of("metadata-ttl", "indefinite")))).as("the kernel's timeout: a day at most")
                .isEqualTo("86400.000");
        assertThat(Mount.kernelTimeout(config(Map.of("metadata-ttl", "1500ms")))).isEqualTo("1.500");
        assertThatThrownBy(() -> config(Map.of("flush-timeout", "soon")))
                .hasMessage("flush-timeout must be a duration such as 10s, 500ms, 2m, 12h or 7d, not 'soon'");
    }

    @Test
    void badValues_areOneSentenceNamingTheKey() {
        assertThatThrownBy(() -> config(Map.of("block-size", "1KiB"))).hasMessage("block-size must be at least 4KiB: 1024");
        assertThatThrownBy(() -> config(Map.of("block-size", "3GiB"))).hasMessage("block-size must be below 2GiB, not '3GiB'");
        assertThatThrownBy(() -> config(Map.of("write-back-quota", "0"))).hasMessage("write-back-quota must be positive: 0");
        assertThatThrownBy(() -> config(Map.of("read-only", "perhaps"))).hasMessage("read-only must be true or false, not 'perhaps'");
        assertThatThrownBy(() -> config(Map.of("kernel-read-ahead", "100000"))).hasMessage(
                "kernel-read-ahead must be a whole number of 4 KiB pages from 0 to 64MiB, not 100000 bytes");
        assertThatThrownBy(() -> config(Map.of("kernel-read-ahead", "1GiB"))).hasMessage(
                "kernel-read-ahead must be a whole number of 4 KiB pages from 0 to 64MiB, not 1073741824 bytes");
        assertThatThrownBy(() -> config(Map.of("cache_size", "1GiB"))).hasMessageStartingWith("unknown mount setting 'cache_size'");
    }
}
