package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.time.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mount's file system driven as libfuse drives it, without FUSE ({@link FsDriver}): folders from listings,
 * version-pinned reads, writes reaching the store at close, reads of cached blocks from the block files. The kernel's
 * side of the same behaviour (page cache, no-open mode) is {@code MountTest}'s and the other real-mount tests'.
 */
class FerryFsTest {
    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void bucketsAreFolders_prefixesAreFolders_objectsAreFiles(@TempDir Path dir) throws Exception {
        try (FsDriver d = new FsDriver(dir, Map.of())) {
            d.store.put(ObjectKey.of("data", "train/a.bin"), PutBody.ofBytes(random(1000, 1)));
            d.store.put(ObjectKey.of("data", "train/b.bin"), PutBody.ofBytes(random(2000, 2)));
            d.store.put(ObjectKey.of("data", "readme.txt"), PutBody.ofBytes("hi".getBytes(StandardCharsets.UTF_8)));

            assertThat(d.list("/")).containsExactly("data");
            assertThat(d.list("/data")).containsExactlyInAnyOrder("train", "readme.txt");
            assertThat(d.list("/data/train")).containsExactly("a.bin", "b.bin");
            assertThat(d.stat("/data").isDir()).isTrue();
            assertThat(d.stat("/data/train").isDir()).isTrue();
            FsDriver.Attr b = d.stat("/data/train/b.bin");
            assertThat(b.isFile()).isTrue();
            assertThat(b.getSize()).isEqualTo(2000);
            assertThat(d.statErrno("/data/train/missing.bin")).isEqualTo(-Errnos.ENOENT);
            assertThat(d.statErrno("/nobucket")).isEqualTo(-Errnos.ENOENT);
        }
    }

    @Test
    void aFileOpenBeforeItIsReplaced_readsTheVersionItOpened_andANewOpenReadsTheNewOne(@TempDir Path dir) throws Exception {
        try (FsDriver d = new FsDriver(dir, Map.of("write-through", "true"))) {
            byte[] v1 = random(3 << 20, 3);
            byte[] v2 = random(3 << 20, 4);
            d.store.put(ObjectKey.of("data", "ckpt.bin"), PutBody.ofBytes(v1));

            FsDriver.Open old = d.open("/data/ckpt.bin", FsDriver.O_RDONLY);
            // its blocks on local disk before it is replaced: a pinned version is read from them (the store has only the new one)
            assertThat(d.read("/data/ckpt.bin", old, 0, v1.length)).isEqualTo(v1);

            FsDriver.Open w = d.open("/data/ckpt.bin", FsDriver.O_WRONLY | FsDriver.O_TRUNC);
            d.write("/data/ckpt.bin", w, v2);
            assertThat(d.close("/data/ckpt.bin", w)).as("the close uploads it (write-through)").isZero();
            assertThat(d.store.readBytes(ObjectKey.of("data", "ckpt.bin"), null)).isEqualTo(v2);

            FsDriver.Open fresh = d.open("/data/ckpt.bin", FsDriver.O_RDONLY);
            assertThat(fresh.directIo).as("while a handle of the old version reads, the new one bypasses the page cache").isTrue();
            assertThat(d.read("/data/ckpt.bin", fresh, 2 << 20, 1000)).isEqualTo(Arrays.copyOfRange(v2, 2 << 20, (2 << 20) + 1000));
            assertThat(d.read("/data/ckpt.bin", old, 2 << 20, 1000)).as("the old handle reads the version it opened")
                    .isEqualTo(Arrays.copyOfRange(v1, 2 << 20, (2 << 20) + 1000));
            d.close("/data/ckpt.bin", old);
            d.close("/data/ckpt.bin", fresh);
        }
    }

    @Test
    void aWrittenFile_isReadBackBeforeAndAfterItsUpload_andItsCachedBlocksAreReadFromTheirFiles(@TempDir Path dir) throws Exception {
        try (FsDriver d = new FsDriver(dir, Map.of())) {
            byte[] data = random(2 << 20, 5);
            FsDriver.Open w = d.create("/data/out/step-1.pt");
            d.write("/data/out/step-1.pt", w, data);
            assertThat(d.close("/data/out/step-1.pt", w)).isZero();
            assertThat(d.list("/data/out")).containsExactly("step-1.pt");

            FsDriver.Open r = d.open("/data/out/step-1.pt", FsDriver.O_RDONLY);
            assertThat(d.read("/data/out/step-1.pt", r, 0, data.length)).isEqualTo(data);
            d.close("/data/out/step-1.pt", r);
            assertThat(d.tiers.door(null).writes().flush(Duration.ofSeconds(30)).complete()).isTrue();
            assertThat(d.store.readBytes(ObjectKey.of("data", "out/step-1.pt"), null)).isEqualTo(data);

            // read once through the tier, then again: the second read's blocks come from their files, with no fetch
            r = d.open("/data/out/step-1.pt", FsDriver.O_RDONLY);
            assertThat(d.read("/data/out/step-1.pt", r, 100, 1 << 20)).isEqualTo(Arrays.copyOfRange(data, 100, 100 + (1 << 20)));
            GetRequest cachedOnly = GetRequest.range(ObjectKey.of("data", "out/step-1.pt"), ByteRange.of(100, 1 << 20))
                    .reaching(GetRequest.Reach.CACHED);
            Await.until("the blocks just read are on local disk", Duration.ofSeconds(10), () -> {
                try (ObjectContent resident = d.tiers.door(null).get(cachedOnly)) {
                    return resident != null;
                }
            });
            long fetched = d.tiers.cache().stats().bytesFromUpstream();
            assertThat(d.read("/data/out/step-1.pt", r, 100, 1 << 20)).isEqualTo(Arrays.copyOfRange(data, 100, 100 + (1 << 20)));
            assertThat(d.tiers.cache().stats().bytesFromUpstream()).isEqualTo(fetched);
            d.close("/data/out/step-1.pt", r);
        }
    }
}
