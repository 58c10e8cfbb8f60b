package dev.ferry.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SizesTest {
    @Test
    void sizes_parseDecimalAndBinaryUnits() {
        assertThat(Sizes.parse("1048576")).isEqualTo(1048576);
        assertThat(Sizes.parse("500MB")).isEqualTo(500_000_000L);
        assertThat(Sizes.parse("4MiB")).isEqualTo(4L << 20);
        assertThat(Sizes.parse("1.5 GiB")).isEqualTo(3L << 29);
        assertThat(Sizes.parse("1PB")).isEqualTo(1_000_000_000_000_000L);
        assertThatThrownBy(() -> Sizes.parse("MB")).hasMessage("size 'MB' does not start with a number");
        assertThat(Sizes.format(3L << 29)).isEqualTo("1.5 GiB");
    }
}
