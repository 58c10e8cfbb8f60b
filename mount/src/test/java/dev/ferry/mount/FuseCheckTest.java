package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one-sentence errors a user sees when FUSE or the mountpoint is not usable, and the config's defaults. */
class FuseCheckTest {
    @TempDir
    Path tmp;

    @Test
    void missingDevice_saysHowToGetIt() {
        assertThatThrownBy(() -> FuseCheck.check(tmp.resolve("fuse"), List.of(tmp), true))
                .isInstanceOf(FuseCheck.FuseUnavailableException.class)
                .hasMessageContaining("is missing").hasMessageContaining("--device /dev/fuse");
    }

    @Test
    void missingLibrary_saysInstallFuse3() throws Exception {
        Path device = Files.createFile(tmp.resolve("fuse"));
        assertThatThrownBy(() -> FuseCheck.check(device, List.of(tmp.resolve("nolib")), true))
                .hasMessage("FUSE is not available: libfuse3 is not installed; install fuse3 (apt-get install fuse3).");
        Path lib = Files.createFile(Files.createDirectories(tmp.resolve("lib")).resolve("libfuse3.so.3"));
        assertThat(FuseCheck.check(device, List.of(tmp.resolve("nolib"), tmp.resolve("lib")), true)).isEqualTo(lib);
    }

    @Test
    void mountpoint_mustBeAnEmptyFolder() throws Exception {
        assertThatThrownBy(() -> FuseCheck.prepareMountpoint(tmp.resolve("none"))).hasMessageContaining("is not a folder");
        Files.writeString(tmp.resolve("x"), "x");
        assertThatThrownBy(() -> FuseCheck.prepareMountpoint(tmp)).hasMessageContaining("is not empty");
        assertThat(FuseCheck.prepareMountpoint(Files.createDirectories(tmp.resolve("empty")))).isNull();
    }

    @Test
    void config_defaultsAndBadInput() {
        MountConfig c = MountConfig.from(Map.of("mountpoint", "/mnt/x", "store-root", "/data"));
        assertThat(c.blockSize()).isEqualTo(4 << 20);
        assertThat(c.readAhead()).isEqualTo(256L << 20);
        assertThat(c.cacheSize()).isEqualTo(10L << 30);
        assertThat(c.hasLocalTier()).isTrue();
        assertThat(MountConfig.from(Map.of("mountpoint", "/m", "upstream", "http://127.0.0.1:9099", "cache-size", "0")).hasLocalTier())
                .as("cache-size 0: no local tier (over a ferry daemon)").isFalse();
        assertThat(Mount.readAheadConfig(c).blocksAhead()).as("256 MiB of 4 MiB blocks").isEqualTo(64);
        assertThat(Mount.readAheadConfig(c).wholeBlocks()).as("files of at most 64 MiB fetched whole at their first read").isEqualTo(16);
        MountConfig shallow = MountConfig.from(Map.of("mountpoint", "/m", "store-root", "/data", "read-ahead", "8MiB"));
        assertThat(Mount.readAheadConfig(shallow).wholeBlocks()).as("never more than the read-ahead").isEqualTo(2);
        MountConfig large = MountConfig.from(Map.of("mountpoint", "/m", "store-root", "/data", "read-ahead", "1GiB", "block-size", "128MiB"));
        assertThat(Mount.readAheadConfig(large).wholeBlocks()).as("at least one block").isEqualTo(1);
        assertThat(c.metadataTtl()).hasSeconds(60);
        assertThat(c.readOnly()).isFalse();
        assertThat(c.writeThrough()).isFalse();
        assertThat(c.cacheDir().toString()).endsWith(".ferry/mount-cache");
        assertThatThrownBy(() -> MountConfig.from(Map.of("mountpoint", "/m"))).hasMessageContaining("exactly one of --store-root");
        assertThatThrownBy(() -> MountConfig.from(Map.of("mountpoint", "/m", "store-root", "/d", "cache-size", "lots")))
                .hasMessage("cache-size must be a size such as 4MiB or 10GiB, not 'lots'");
        assertThatThrownBy(() -> MountConfig.from(Map.of("mountpoint", "/m", "upstream", "nope", "store-root", "/d")))
                .hasMessageContaining("upstream must be a URL");
    }
}
