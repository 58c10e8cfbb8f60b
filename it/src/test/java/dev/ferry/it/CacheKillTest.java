package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CachingStore;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 at random points: a child process fills a cache (writes, evictions) and is killed with SIGKILL;
 * after each kill, {@code ferry verify} (its own process) must find no bad block, and a cache reopened on the
 * directory must serve every object byte-identical to the origin.
 */
class CacheKillTest {
    static final int OBJECTS = 12;
    static final int ITERATIONS = 8;

    @TempDir
    Path dir;

    @Test
    void killedWhileFilling_restartsClean_andServesTheOriginsBytes() throws Exception {
        Path originDir = dir.resolve("origin");
        FileObjectStore origin = new FileObjectStore(originDir);
        origin.createBucket("data");
        Random random = new Random(99);
        List<byte[]> contents = new ArrayList<>();
        for (int i = 0; i < OBJECTS; i++) {
            byte[] b = new byte[200_000 + random.nextInt(700_000)];
            random.nextBytes(b);
            origin.put(ObjectKey.of("data", "obj/" + i), PutBody.ofBytes(b));
            contents.add(b);
        }
        Path cacheDir = dir.resolve("cache");
        for (int iteration = 0; iteration < ITERATIONS; iteration++) {
            Servers.Child filler = Servers.readyChild(CacheFillerMain.class, originDir.toString(), cacheDir.toString(),
                    Integer.toString(OBJECTS), Integer.toString(iteration));
            Process child = filler.process();
            int killAfter = 1 + random.nextInt(400); // reads done; the next one is under way when the kill lands
            StringBuilder said = new StringBuilder();
            for (int reads = 0; reads < killAfter; ) {
                String line = filler.out().readLine();
                assertThat(line).as("the filler ended after %d reads, saying: %s", reads, said).isNotNull();
                if (line.equals("read")) {
                    reads++;
                } else {
                    said.append(line).append('\n');
                }
            }
            child.destroyForcibly(); // SIGKILL
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();

            Path log = dir.resolve("verify-" + iteration + ".log");
            Process verify = Servers.ferry(log, "verify", "--cache-dir", cacheDir.toString());
            assertThat(verify.waitFor(2, TimeUnit.MINUTES)).isTrue();
            assertThat(verify.exitValue()).as(Files.readString(log)).isZero();
            assertThat(Files.readString(log)).contains("no bad blocks");

            try (CachingStore cache = new CachingStore(origin, CacheConfig.of(cacheDir, 48L * 65536).withBlockSize(65536))) {
                assertThat(cache.isPassThrough()).isFalse();
                if (iteration > 0) {
                    assertThat(cache.stats().residentBlocks()).as("blocks that survived the kill").isPositive();
                }
                for (int i = 0; i < OBJECTS; i++) {
                    assertThat(cache.readBytes(ObjectKey.of("data", "obj/" + i), null)).as("object %d after kill %d", i, iteration)
                            .isEqualTo(contents.get(i));
                }
            }
            if (iteration % 2 == 0) {
                // closed cleanly, but make the next child rebuild its index from the block files, as after a crash
                Files.deleteIfExists(cacheDir.resolve("index.snapshot"));
            }
        }
    }
}
