package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.ferry.settings.Setting;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code ferry mount}'s flags come from the mount's table: the ones it always had, with the table's help. */
class MountCommandTest {
    @Test
    void everyMountSetting_hasItsFlag_andTheFlagsOfBeforeAreThere() {
        List<Setting<?>> rows = MountCommand.rows();
        assumeTrue(rows != null, "this build has no mount module (Java 21)");
        CommandLine.Model.CommandSpec spec = new CommandLine(new MountCommand()).getCommandSpec();
        for (Setting<?> s : rows) {
            assertThat(spec.findOption("--" + s.key())).as("ferry mount --" + s.key()).isNotNull();
            assertThat(spec.findOption("--" + s.key()).description()).containsExactly(s.description());
        }
        for (String flag : List.of("store-root", "upstream", "cache-dir", "cache-size", "block-size", "read-ahead", "metadata-ttl",
                "read-only", "write-through", "write-back-quota", "flush-timeout", "first-byte-timeout", "verify")) {
            assertThat(spec.findOption("--" + flag)).as("ferry mount --" + flag).isNotNull();
        }
        assertThat(spec.findOption("--read-only").arity().max()).as("a switch takes no value").isZero();
    }

    @Test
    void aBadValue_isOneSentence_exit2() {
        assumeTrue(MountCommand.rows() != null, "this build has no mount module (Java 21)");
        MainTest.Run r = MainTest.run("mount", "/tmp/ferry-never-mounted", "--store-root", "/tmp/ferry-never-used", "--flush-timeout", "soon");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("ferry: flush-timeout must be a duration such as 10s, 500ms, 2m, 12h or 7d, not 'soon'");
    }
}
