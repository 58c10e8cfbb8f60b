package dev.ferry.serve.node;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.CacheStats;
import dev.ferry.cache.CorruptBlocks;
import dev.ferry.serve.DaemonFixture;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Issue 20's probe against a running daemon: every block file of a cached object damaged on disk (16 bytes
 * flipped in each, written through the file system; then the page cache dropped when this process may), then
 * GET and ranged GETs with the AWS SDK and the JDK's HTTP client over real sockets. Every answer carries the
 * object's bytes, fetched again from the store, and every bad block counts as evicted-corrupt. The hits before
 * the damage went out with sendfile, as they do again once the refetched blocks are checked.
 */
class CorruptBlockDaemonTest {
    static final int MIB = 1 << 20;
    static final int BLOCKS = 6;

    @TempDir
    Path tmp;
    DaemonFixture daemon;
    S3Client s3;
    HttpClient http;
    byte[] bytes;

    @BeforeEach
    void start() throws IOException {
        daemon = DaemonFixture.overFolder(tmp).start(); // 1 MiB blocks, verify at its default
        bytes = new byte[(BLOCKS - 1) * MIB + 4321];
        new Random(20).nextBytes(bytes);
        Files.write(daemon.root.resolve("data/obj.bin"), bytes);
        s3 = daemon.sdk("a", "b");
        http = HttpClient.newHttpClient();
    }

    @AfterEach
    void stop() {
        s3.close();
        http.close();
        daemon.close();
    }

    byte[] sdkGet(String range) {
        return s3.getObjectAsBytes(b -> b.bucket("data").key("obj.bin").range(range)).asByteArray();
    }

    HttpResponse<byte[]> httpGet(String range) throws IOException, InterruptedException {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(daemon.endpoint() + "/data/obj.bin"));
        if (range != null) {
            r.header("Range", range);
        }
        return http.send(r.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    CacheStats cache() {
        return daemon.daemon.node().stack().cache().stats();
    }

    static byte[] slice(byte[] b, long from, long toInclusive) {
        return Arrays.copyOfRange(b, (int) from, (int) toInclusive + 1);
    }

    /**
     * The object read through the daemon, then again once settled (each block checked, unless trusted as fetched:
     * {@link CorruptBlocks#checksOfBlocksJustFetched}), then once more with sendfile.
     */
    void cachedAndChecked() throws Exception {
        assertThat(sdkGet(null)).isEqualTo(bytes);
        CorruptBlocks.waitToSettle();
        assertThat(sdkGet(null)).isEqualTo(bytes);
        long checked = CorruptBlocks.checksOfBlocksJustFetched(tmp, BLOCKS);
        assertThat(cache().verifiedBlocks()).isEqualTo(checked);
        long zeroCopy = daemon.stats().zeroCopyBytes();
        assertThat(httpGet(null).body()).isEqualTo(bytes);
        assertThat(daemon.stats().zeroCopyBytes() - zeroCopy).as("a trusted hit goes out with sendfile").isEqualTo(bytes.length);
        assertThat(cache().verifiedBlocks()).as("and is not read again").isEqualTo(checked);
    }

    @Test
    void getAndRangedGets_afterEveryBlockFileIsCorruptedWhileRunning_answerTheRightBytes() throws Exception {
        cachedAndChecked();
        assertThat(CorruptBlocks.flip16InEach(tmp.resolve("cache"))).isEqualTo(BLOCKS);
        CorruptBlocks.dropPageCache();

        long mid2 = 2L * MIB + MIB / 2; // the flipped bytes of block 2 lie around its middle
        assertThat(sdkGet("bytes=" + (mid2 - 100) + "-" + (mid2 + 99))).isEqualTo(slice(bytes, mid2 - 100, mid2 + 99));
        assertThat(cache().evictedCorrupt()).as("the one block the range read").isEqualTo(1);

        HttpResponse<byte[]> across = httpGet("bytes=" + (3L * MIB + 10) + "-" + (4L * MIB + MIB / 2 + 10)); // blocks 3 and 4
        assertThat(across.statusCode()).isEqualTo(206);
        assertThat(across.body()).isEqualTo(slice(bytes, 3L * MIB + 10, 4L * MIB + MIB / 2 + 10));
        assertThat(cache().evictedCorrupt()).isEqualTo(3);

        assertThat(sdkGet(null)).isEqualTo(bytes);
        assertThat(httpGet(null).body()).isEqualTo(bytes);
        assertThat(cache().evictedCorrupt()).as("every block file was damaged, each dropped once").isEqualTo(BLOCKS);
        assertThat(daemon.stats().cutStreams()).as("no reply was cut: degraded to a refetch, not to an error").isZero();
        assertThat(daemon.stats().serverErrors()).isZero();

        CorruptBlocks.waitToSettle();
        assertThat(httpGet(null).body()).isEqualTo(bytes); // checks the refetched blocks
        long zeroCopy = daemon.stats().zeroCopyBytes();
        assertThat(httpGet(null).body()).isEqualTo(bytes);
        assertThat(daemon.stats().zeroCopyBytes() - zeroCopy).as("sound again: sendfile again").isEqualTo(bytes.length);
    }

    @Test
    void rangedGetsOnAKeepAliveConnection_afterCorruption_neverCarryTheFlippedBytes() throws Exception {
        cachedAndChecked();
        CorruptBlocks.flip16InEach(tmp.resolve("cache"));
        CorruptBlocks.dropPageCache();
        // 64 KiB ranges over the whole object, the flipped bytes of every block among them, answered from the event loop when they can
        for (long from = 0; from < bytes.length; from += 64 * 1024) {
            long to = Math.min(bytes.length - 1, from + 64 * 1024 - 1);
            HttpResponse<byte[]> r = httpGet("bytes=" + from + "-" + to);
            assertThat(r.statusCode()).isEqualTo(206);
            assertThat(r.body()).as("bytes %d-%d", from, to).isEqualTo(slice(bytes, from, to));
        }
        assertThat(cache().evictedCorrupt()).isEqualTo(BLOCKS);
        assertThat(daemon.stats().cutStreams()).isZero();
    }

    @Test
    void aPeerAskingForCachedBlocksOnly_getsThemChecked_andNotCachedOnceTheyAreBad() throws Exception {
        assertThat(sdkGet(null)).isEqualTo(bytes);
        // at once: unless trusted as fetched, the blocks were never checked since they were written, so this reply checks them (not on the event loop)
        HttpRequest cachedOnly = HttpRequest.newBuilder(URI.create(daemon.endpoint() + "/data/obj.bin"))
                .header(dev.ferry.serve.protocol.FerryHeaders.CACHED_ONLY, "1").build();
        HttpResponse<byte[]> sound = http.send(cachedOnly, HttpResponse.BodyHandlers.ofByteArray());
        assertThat(sound.statusCode()).isEqualTo(200);
        assertThat(sound.body()).isEqualTo(bytes);
        assertThat(cache().verifiedBlocks()).isEqualTo(CorruptBlocks.checksOfBlocksJustFetched(tmp, BLOCKS));

        CorruptBlocks.flip16InEach(tmp.resolve("cache"));
        CorruptBlocks.dropPageCache();
        HttpResponse<byte[]> bad = http.send(cachedOnly, HttpResponse.BodyHandlers.ofByteArray());
        assertThat(bad.statusCode()).as("the peer reads it elsewhere").isEqualTo(404);
        assertThat(cache().evictedCorrupt()).isEqualTo(1);
        assertThat(sdkGet(null)).isEqualTo(bytes);
    }
}
