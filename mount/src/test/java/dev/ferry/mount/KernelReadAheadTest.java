package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The read-ahead of a folder that is no FUSE mount is left alone, with a reason (the mounted case: MountListingTest). */
class KernelReadAheadTest {
    @Test
    void aFolderThatIsNoFuseMount_isLeftAlone_withTheReason(@TempDir Path dir) {
        assertThat(KernelReadAhead.set(dir, 1 << 20)).isEqualTo(dir + " is not a FUSE mount in /proc/self/mountinfo");
        assertThat(KernelReadAhead.get(dir)).isEqualTo(-1);
        assertThat(KernelReadAhead.set(Path.of("/proc"), 1 << 20)).as("a mount, but not FUSE's").endsWith("is not a FUSE mount in /proc/self/mountinfo");
    }
}
