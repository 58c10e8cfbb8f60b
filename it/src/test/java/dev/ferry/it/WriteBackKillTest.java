package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.writeback.FlushResult;
import dev.ferry.writeback.WriteBackConfig;
import dev.ferry.writeback.WriteBackStore;
import java.io.BufferedReader;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of a process writing checkpoints (small and multipart-sized) through write-back, at random points,
 * many times: after each restart and flush, every acknowledged write's key holds that version, or a later one
 * the child wrote, byte for byte, in the object store.
 */
class WriteBackKillTest {
    static final int ITERATIONS = 6;

    @TempDir
    Path dir;

    @Test
    void killedWhileWriting_everyAcknowledgedWriteBecomesDurable() throws Exception {
        Path originDir = dir.resolve("origin");
        FileObjectStore origin = new FileObjectStore(originDir);
        origin.createBucket("ckpt");
        Path wbDir = dir.resolve("wb");
        Random random = new Random(5);
        Map<Integer, Long> lastAcked = new HashMap<>();
        long nextVersion = 1;
        for (int iteration = 0; iteration < ITERATIONS; iteration++) {
            Servers.Child started = Servers.readyChild(WriteBackChildMain.class, originDir.toString(), wbDir.toString(),
                    Long.toString(nextVersion));
            Process child = started.process();
            BufferedReader out = started.out();
            long killAt = System.nanoTime() + (300 + random.nextInt(1500)) * 1_000_000L;
            Thread reader = Thread.ofPlatform().start(() -> {
                try {
                    for (String l; (l = out.readLine()) != null; ) {
                        if (l.startsWith("acked ")) {
                            String[] f = l.split(" ");
                            synchronized (lastAcked) {
                                lastAcked.merge(Integer.parseInt(f[1]), Long.parseLong(f[2]), Math::max);
                            }
                        }
                    }
                } catch (java.io.IOException ignored) {
                    // the child died
                }
            });
            child.waitFor(Math.max(0, killAt - System.nanoTime()), TimeUnit.NANOSECONDS); // the kill moment, or its own end
            child.destroyForcibly(); // SIGKILL
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            reader.join(10_000);

            long maxSeen;
            // a folder store writes in this process: an upload in flight at the kill died with it, so nothing waits to settle
            // (a write that was being uploaded is still checked in the store before it is durable)
            try (WriteBackStore wb = new WriteBackStore(origin, WriteBackConfig.of(wbDir, 1L << 30).withSettleWindow(Duration.ZERO))) {
                FlushResult r = wb.flush(Duration.ofMinutes(2));
                assertThat(r.complete()).as("flush after kill %d: %s", iteration, r.firstError()).isTrue();
            }
            synchronized (lastAcked) {
                assertThat(lastAcked).as("the child acknowledged writes before kill %d", iteration).isNotEmpty();
                maxSeen = 0;
                for (Map.Entry<Integer, Long> acked : lastAcked.entrySet()) {
                    byte[] stored;
                    try {
                        stored = origin.readBytes(ObjectKey.of("ckpt", "k" + acked.getKey()), null);
                    } catch (ObjectNotFoundException e) {
                        throw new AssertionError("acknowledged write of k" + acked.getKey() + " v" + acked.getValue() + " was lost", e);
                    }
                    long version = ByteBuffer.wrap(stored).getLong(0);
                    assertThat(version).as("k%d holds the acknowledged version or a later one", acked.getKey())
                            .isGreaterThanOrEqualTo(acked.getValue());
                    assertThat(stored).as("k%d v%d byte for byte", acked.getKey(), version)
                            .isEqualTo(WriteBackChildMain.content(acked.getKey(), version));
                    maxSeen = Math.max(maxSeen, version);
                }
            }
            nextVersion = maxSeen + 1000; // later children write newer versions
        }
    }
}
