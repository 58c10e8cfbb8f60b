package dev.ferry.store.shared;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ByteRange;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.file.FileObjectStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two nodes sharing one mounted folder as a tier: one fetch from the origin serves both; versions never mix. */
class SharedTierStoreTest {
    @TempDir
    Path dir;

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void aCopyFilledByOneNodeServesTheOther_andANewVersionIsFetchedAnew() throws Exception {
        FileObjectStore originFiles = new FileObjectStore(dir.resolve("origin"));
        originFiles.createBucket("data");
        TrackingStore origin = new TrackingStore(originFiles);
        ObjectKey key = ObjectKey.of("data", "train/shard-1.tar");
        byte[] v1 = random(300_000, 1);
        origin.put(key, PutBody.ofBytes(v1));
        Path mount = dir.resolve("shared");
        try (SharedTierStore a = new SharedTierStore(origin, mount, Duration.ZERO);
                SharedTierStore b = new SharedTierStore(origin, mount, Duration.ZERO)) {
            origin.reset();
            assertThat(a.readBytes(key, ByteRange.of(1000, 5000))).isEqualTo(java.util.Arrays.copyOfRange(v1, 1000, 6000));
            assertThat(origin.count(TrackingStore.Op.GET)).as("node a filled the shared copy").isEqualTo(1);
            assertThat(b.readBytes(key, null)).isEqualTo(v1);
            assertThat(b.readBytes(key, ByteRange.of(299_990, 10))).isEqualTo(java.util.Arrays.copyOfRange(v1, 299_990, 300_000));
            assertThat(origin.count(TrackingStore.Op.GET)).as("node b read the shared copy").isEqualTo(1);
            assertThat(b.stats().hits()).isEqualTo(2);

            byte[] v2 = random(200_000, 2); // other bytes: another MD5, the folder store's ETag, in the same clock tick or not
            origin.put(key, PutBody.ofBytes(v2));
            assertThat(b.readBytes(key, null)).as("a new version is never served from the old copy").isEqualTo(v2);
            assertThat(origin.count(TrackingStore.Op.GET)).isEqualTo(2);
        }
    }

    @Test
    void aDamagedCopyIsReplaced() throws Exception {
        FileObjectStore origin = new FileObjectStore(dir.resolve("origin"));
        origin.createBucket("data");
        ObjectKey key = ObjectKey.of("data", "a.bin");
        byte[] data = random(100_000, 3);
        origin.put(key, PutBody.ofBytes(data));
        Path mount = dir.resolve("shared");
        try (SharedTierStore tier = new SharedTierStore(origin, mount, Duration.ZERO)) {
            assertThat(tier.readBytes(key, null)).isEqualTo(data);
            Path copy;
            try (var files = Files.walk(mount.resolve(SharedTierStore.BUCKET))) {
                copy = files.filter(Files::isRegularFile).findFirst().orElseThrow();
            }
            Files.write(copy, new byte[10]); // truncated by a crash of some other writer, say
            assertThat(tier.readBytes(key, null)).isEqualTo(data);
            assertThat(tier.stats().damaged()).isEqualTo(1);
        }
    }
}
