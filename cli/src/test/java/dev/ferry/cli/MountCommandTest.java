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

    @Test
    void withoutForeground_itReturnsOnceMounted_andTheMountRunsOnUntilUnmounted(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        assumeTrue(MountCommand.rows() != null, "this build has no mount module (Java 21)");
        boolean fuse = java.nio.file.Files.exists(java.nio.file.Path.of("/dev/fuse"))
                && java.nio.file.Files.isExecutable(java.nio.file.Path.of("/usr/bin/fusermount3"));
        if (!fuse && "1".equals(System.getenv("FERRY_REQUIRE_REAL_CLIENTS"))) {
            throw new AssertionError("FUSE (/dev/fuse and fusermount3) is needed for this test");
        }
        assumeTrue(fuse, "FUSE (/dev/fuse and fusermount3) is not here");
        java.nio.file.Path store = java.nio.file.Files.createDirectories(dir.resolve("store/data"));
        java.nio.file.Files.writeString(store.resolve("hello.txt"), "hello, mounted in the background");
        java.nio.file.Path mp = java.nio.file.Files.createDirectories(dir.resolve("mnt"));
        java.nio.file.Path log = dir.resolve("mount.log");
        MainTest.Run r = MainTest.runPrinting("mount", mp.toString(), "--store-root", dir.resolve("store").toString(), "--cache-dir",
                dir.resolve("cache").toString(), "--read-only", "--log", log.toString());
        try {
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains(mp + " mounted, in the background (pid ").contains("fusermount3 -u " + mp);
            assertThat(BackgroundMount.mounted(mp)).isTrue();
            assertThat(java.nio.file.Files.readString(mp.resolve("data/hello.txt"))).isEqualTo("hello, mounted in the background");
        } finally {
            new ProcessBuilder("fusermount3", "-u", mp.toString()).inheritIO().start().waitFor();
        }
        // the background mount sees it was unmounted, says what the store saw, and ends
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!java.nio.file.Files.readString(log).contains("unmounted") && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(java.nio.file.Files.readString(log)).contains("ferry: mounted").contains("unmounted");

        // a mount that cannot start says why, from its log, and exits non-zero; bad flags before anything starts
        MainTest.Run notEmpty = MainTest.run("mount", dir.resolve("store").toString(), "--store-root", dir.resolve("nowhere").toString(),
                "--log", dir.resolve("bad.log").toString());
        assertThat(notEmpty.exit()).isNotZero();
        assertThat(notEmpty.err()).startsWith("ferry: ");
    }
}
