package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.CorruptBlocks;
import dev.ferry.time.Clock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20's probe against a real mount (libfuse3, /dev/fuse): the block files of a file read through the
 * mount damaged while it is mounted (16 bytes flipped in each), the page cache dropped (which also drops the
 * kernel's copy of the mounted file; when this process may not, the kernel may answer from that copy and
 * the mount is not asked), then {@code cat} and {@code dd} at offsets: they read the store's bytes, the bad
 * blocks dropped and read from the store again.
 */
class CorruptBlockMountTest {
    static final int MIB = 1 << 20;
    static final int BLOCKS = 6;

    @Test
    void catAndDd_afterEveryBlockFileIsCorruptedWhileMounted_readTheStoresBytes(@TempDir Path dir) throws Exception {
        Tools.requireFuse();
        Path data = Files.createDirectories(dir.resolve("store/data"));
        byte[] bytes = new byte[(BLOCKS - 1) * MIB + 4321];
        new Random(21).nextBytes(bytes);
        Files.write(data.resolve("obj.bin"), bytes);
        Path mp = Files.createDirectories(dir.resolve("mp"));
        MountConfig config = MountConfig.from(Map.of("mountpoint", mp.toString(), "store-root", dir.resolve("store").toString(),
                "cache-dir", dir.resolve("cache").toString(), "block-size", "1MiB", "cache-size", "64MiB", "read-ahead", "0"));
        assertThat(config.verify()).isEqualTo(dev.ferry.cache.VerifyMode.ON_LOAD);
        try (Mount mount = Mount.start(config, Clock.system(), s -> { })) {
            String file = mp.resolve("data/obj.bin").toString();
            assertThat(Tools.sh("cat '" + file + "' | sha256sum | cut -d' ' -f1").trim()).isEqualTo(sha256(bytes));
            CorruptBlocks.waitToSettle();
            CorruptBlocks.dropPageCache(); // so the next read reaches the mount, which checks each block
            assertThat(Tools.sh("cat '" + file + "' | sha256sum | cut -d' ' -f1").trim()).isEqualTo(sha256(bytes));

            assertThat(CorruptBlocks.flip16InEach(dir.resolve("cache"))).isEqualTo(BLOCKS);
            boolean dropped = CorruptBlocks.dropPageCache();

            long mid2 = 2L * MIB + MIB / 2; // block 2's flipped bytes
            String dd = Tools.sh("dd if='" + file + "' bs=4096 skip=" + ((mid2 - 4096) / 4096) + " count=2 status=none | sha256sum | cut -d' ' -f1");
            long from = (mid2 - 4096) / 4096 * 4096;
            assertThat(dd.trim()).isEqualTo(sha256(Arrays.copyOfRange(bytes, (int) from, (int) from + 8192)));
            assertThat(Tools.sh("cat '" + file + "' | sha256sum | cut -d' ' -f1").trim()).isEqualTo(sha256(bytes));
            if (dropped) {
                // every damaged block found and dropped; the kernel's reads of one block can come at once, so a block may be
                // found bad by two of them (counted twice, fetched again once): none goes unseen
                assertThat(mount.stack().cache().stats().evictedCorrupt()).as("every damaged block dropped")
                        .isBetween((long) BLOCKS, 2L * BLOCKS);
            }
        }
    }

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }
}
