package dev.ferry.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one grammar of sizes and durations, and the sentence bad input gets. */
class CodecTest {
    private static final Setting<Duration> TTL = Setting.flag("ttl", "DURATION", Codec.DURATION, "60s", "A duration.");
    private static final Setting<Long> SIZE = Setting.flag("size", "SIZE", Codec.SIZE, "10GiB", "A size.");
    private static final Setting<Integer> BLOCK = Setting.flag("block", "SIZE", Codec.INT_SIZE, "4MiB", "A size below 2GiB.");
    private static final Setting<Integer> N = Setting.flag("n", "N", Codec.INT, "1", "A number.");
    private static final Setting<Boolean> ON = Setting.toggle("on", "A switch.");

    @Test
    void durations_takeMillisSecondsMinutesHoursAndDays_andPrintInTheLargestExactUnit() {
        assertThat(TTL.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(TTL.parse("10")).isEqualTo(Duration.ofSeconds(10));
        assertThat(TTL.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(TTL.parse("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(TTL.parse("12h")).isEqualTo(Duration.ofHours(12));
        assertThat(TTL.parse(" 7d ")).isEqualTo(Duration.ofDays(7));
        assertThat(TTL.format(Duration.ofHours(24))).isEqualTo("1d");
        assertThat(TTL.format(Duration.ofMinutes(90))).isEqualTo("90m");
        assertThat(TTL.format(Duration.ofSeconds(60))).isEqualTo("60s");
        assertThat(TTL.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThatThrownBy(() -> TTL.parse("soon")).hasMessage("ttl must be a duration such as 10s, 500ms, 2m, 12h or 7d, not 'soon'");
    }

    @Test
    void aTtl_isADurationOrIndefinite_andPrintsAsItWasGiven() {
        Setting<Duration> ttl = Setting.flag("metadata-ttl", "DURATION", Codec.TTL, "60s", "A time to trust.");
        assertThat(ttl.parse("10m")).isEqualTo(Duration.ofMinutes(10));
        assertThat(ttl.parse(" Indefinite ")).isEqualTo(Codec.INDEFINITE);
        assertThat(Codec.INDEFINITE.toNanos()).as("a count of nanoseconds holds it").isEqualTo(Long.MAX_VALUE);
        assertThat(ttl.format(Codec.INDEFINITE)).isEqualTo("indefinite");
        assertThat(ttl.format(Duration.ofSeconds(60))).isEqualTo("60s");
        assertThatThrownBy(() -> ttl.parse("forever"))
                .hasMessage("metadata-ttl must be a duration such as 60s, 10m or 12h, or indefinite, not 'forever'");
    }

    @Test
    void badInput_isOneSentenceNamingTheKey() {
        assertThat(SIZE.parse("64MiB")).isEqualTo(64L << 20);
        assertThatThrownBy(() -> SIZE.parse("lots")).hasMessage("size must be a size such as 4MiB or 10GiB, not 'lots'");
        assertThatThrownBy(() -> BLOCK.parse("2GiB")).hasMessage("block must be below 2GiB, not '2GiB'");
        assertThatThrownBy(() -> N.parse("lots")).hasMessage("n must be a number, not 'lots'");
        assertThatThrownBy(() -> ON.parse("maybe")).hasMessage("on must be true or false, not 'maybe'");
        assertThatThrownBy(() -> Codec.URL.parse().apply("upstream", "ftp://x")).hasMessageContaining("upstream must be a URL, http:// or https://");
    }

    @Test
    void aTable_refusesAKeyTwice_andUnknownKeys() {
        assertThatThrownBy(() -> SettingTable.of(List.of(TTL), List.of(Setting.flag("ttl", "D", Codec.DURATION, "1s", "Again."))))
                .hasMessage("two settings named ttl");
        SettingTable table = SettingTable.of(List.of(TTL, SIZE, ON));
        Settings s = table.defaults().with(Map.of("ttl", "1h", "on", "yes"));
        assertThat(s.get(TTL)).isEqualTo(Duration.ofHours(1));
        assertThat(s.describe()).containsExactly(Map.entry("ttl", "1h"), Map.entry("size", "10.0 GiB"), Map.entry("on", "true"));
        assertThatThrownBy(() -> table.defaults().with(Map.of("tll", "1s"))).hasMessage("unknown setting 'tll'; known: on, size, ttl");
        assertThatThrownBy(() -> s.get(N)).hasMessageContaining("no setting n");
    }
}
