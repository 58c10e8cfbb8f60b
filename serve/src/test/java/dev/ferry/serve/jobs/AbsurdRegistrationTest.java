package dev.ferry.serve.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonChildMain;
import dev.ferry.serve.RawHttp;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registrations of issue 20 that took a daemon down (gigabytes, then OutOfMemoryError; minutes of CPU),
 * sent on a raw socket to a daemon in its own JVM with a 256 MiB heap and the default 4 MiB blocks: each is
 * answered 400 with the bound it passed, or planned within the heap, and the daemon serves on. Before the
 * fix, the world took 3.7 GB, the 2^63 - 1 byte shard overflowed past the check, the 10 TB shard was planned
 * for 32 s in 2.2 GB, 100,000 canonical nodes looped without end, and samples of 2^32 + 1 registered as 1.
 */
class AbsurdRegistrationTest {
    /** Far below what any of these took before; the largest plan the limits allow needs more (see JobLimits). */
    private static final String HEAP = "-Xmx256m";

    @TempDir
    static Path dir;
    private static Process daemon;
    private static int port;
    private static Path log;

    @BeforeAll
    static void startDaemon() throws Exception {
        Path root = dir.resolve("store");
        Files.createDirectories(root.resolve("data"));
        Files.write(root.resolve("data/ok.bin"), new byte[4096]);
        log = dir.resolve("daemon.log");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), HEAP,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
                DaemonChildMain.class.getName(), "store-root=" + root, "cache-dir=" + dir.resolve("cache"), "cache-size=1GiB"));
        daemon = new ProcessBuilder(command).redirectError(log.toFile()).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(daemon.getInputStream(), StandardCharsets.UTF_8));
        for (String line = out.readLine(); line != null && !line.equals("ready"); line = out.readLine()) {
            if (line.startsWith("port ")) {
                port = Integer.parseInt(line.substring(5));
            }
        }
        assertThat(port).as("the daemon's port (log: %s)", log).isPositive();
    }

    @AfterAll
    static void stopDaemon() throws Exception {
        if (daemon != null) {
            daemon.getOutputStream().close();
            if (!daemon.waitFor(20, TimeUnit.SECONDS)) {
                daemon.destroyForcibly().waitFor();
            }
        }
    }

    /** After every case: the daemon lives, never ran out of heap, and still serves an object. */
    @AfterEach
    void daemonServesOn() throws Exception {
        assertThat(daemon.isAlive()).isTrue();
        RawHttp.Answer get = RawHttp.exchange(port, "GET /data/ok.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assertThat(get.status()).isEqualTo(200);
        assertThat(get.body()).hasSize(4096);
        assertThat(Files.readString(log)).doesNotContain("OutOfMemoryError");
    }

    static String manifest(long size, String samples) {
        return "{\"format\":\"ferry-manifest/1\",\"source\":\"t\",\"shards\":[{\"bucket\":\"data\",\"key\":\"s.tar\",\"size\":" + size
                + ",\"etag\":\"e\",\"samples\":" + samples + "}]}";
    }

    /** Waits for the answer up to 2 minutes: a registration within the limits is planned for seconds on a loaded machine. */
    static RawHttp.Answer register(String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        return RawHttp.exchange(port, "POST /_ferry/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
                + "Content-Length: " + bytes.length + "\r\n\r\n" + new String(bytes, StandardCharsets.ISO_8859_1), false, 120_000);
    }

    private static void assertRefused(RawHttp.Answer a, String... sentence) {
        assertThat(a.status()).as(a.body()).isEqualTo(400);
        assertThat(a.body()).contains("\"code\":\"InvalidArgument\"");
        for (String s : sentence) {
            assertThat(a.body()).contains(s);
        }
    }

    @Test
    void aWorldOf100000NodesOf4096RanksOf1024Workers_withOneSample_isRefusedByItsSampleReads() throws Exception {
        // padding gives each of the 409,600,000 ranks the one sample: RankAssignment once sized a long per rank (3.3 GB)
        assertRefused(register("{\"job\":\"world\",\"manifest\":" + manifest(1000, "1")
                        + ",\"world\":{\"nodes\":100000,\"ranks_per_node\":4096,\"workers_per_rank\":1024}}"),
                "a world of 409,600,000 ranks (100,000 nodes x 4,096 ranks per node) reads 409,600,000 samples per epoch",
                "a job may plan at most 2,097,152 sample reads per epoch");
    }

    @Test
    void aShardOf2To63MinusOneBytes_isRefused_itsBlocksCountedWithoutOverflow() throws Exception {
        assertRefused(register("{\"job\":\"huge\",\"manifest\":" + manifest(Long.MAX_VALUE, "1") + "}"),
                "at s3://data/s.tar, 9,223,372,036,854,775,807 bytes", "a job may plan at most 2,097,152");
    }

    @Test
    void aTenTerabyteShard_isRefused_asTheDocsSay() throws Exception {
        assertRefused(register("{\"job\":\"tentb\",\"manifest\":" + manifest(10_000_000_000_000L, "1") + "}"),
                "more than 2,097,152 block reads of 4,194,304 bytes per epoch", "10,000,000,000,000 bytes");
    }

    @Test
    void aWorldThatRereadsAHugeSampleOnEveryRank_isRefusedByItsBlockReads() throws Exception {
        // a million ranks each read the one sample of a 4 GiB shard (1,024 blocks): a billion block reads
        assertRefused(register("{\"job\":\"pad\",\"manifest\":" + manifest(4L << 30, "1")
                        + ",\"world\":{\"nodes\":1000,\"ranks_per_node\":1000}}"),
                "a world of 1,000,000 ranks reads 999,999 samples again (padding), each up to 1,024 blocks of 4,194,304 bytes",
                "2,097,152 block reads per epoch");
    }

    @Test
    void a100000CanonicalNodes_with4MiSamples_isRefusedByTheSamples() throws Exception {
        assertRefused(register("{\"job\":\"canon\",\"manifest\":" + manifest(419_430_400, "4194304") + ",\"partition\":\"node\",\"canonical_nodes\":100000}"),
                "the manifest declares more than 2,097,152 samples per epoch", "a job may have at most 2,097,152");
    }

    @Test
    void a100000CanonicalNodes_withinTheLimits_isPlanned() throws Exception {
        // 200,000 samples of one shard over 100,000 canonical nodes: the interleave once looped rounds x nodes (2 x 10^10)
        RawHttp.Answer a = register("{\"job\":\"canon-ok\",\"manifest\":" + manifest(20_000_000, "200000") + ",\"partition\":\"node\",\"canonical_nodes\":100000}");
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        assertThat(a.body()).contains("\"samples\":200000").contains("\"canonical_nodes\":100000");
    }

    @Test
    void samplesOf2To31Or2To32Plus1_areRefusedNamingTheField_neverCutToAnInt() throws Exception {
        assertRefused(register("{\"job\":\"s31\",\"manifest\":" + manifest(1000, "2147483648") + "}"),
                "manifest: shards[0]: samples must be 1 to 2147483647: 2147483648");
        assertRefused(register("{\"job\":\"s32\",\"manifest\":" + manifest(1000, "4294967297") + "}"),
                "manifest: shards[0]: samples must be 1 to 2147483647: 4294967297");
        assertRefused(register("{\"job\":\"half\",\"manifest\":" + manifest(1000, "1.5") + "}"),
                "manifest: shards[0]: samples must be a whole number from 1 to 2147483647, not 1.5");
        assertRefused(register("{\"job\":\"big\",\"manifest\":" + manifest(1000, "1e999999999") + "}"),
                "manifest: shards[0]: samples must be 1 to 2147483647");
    }

    @Test
    void numbersOfTheRequestPastTheirRange_areRefusedNamingTheField() throws Exception {
        assertRefused(register("{\"job\":\"n\",\"manifest\":" + manifest(1000, "1") + ",\"world\":{\"nodes\":4294967297}}"),
                "nodes must be 1 to 100000: 4294967297");
        assertRefused(register("{\"job\":\"b\",\"manifest\":" + manifest(1000, "1") + ",\"batch_size\":2.5}"),
                "batch_size must be a whole number from 1 to 1048576, not 2.5");
        assertRefused(register("{\"job\":\"s\",\"manifest\":" + manifest(1000, "1") + ",\"seed\":18446744073709551616}"),
                "seed must be -9223372036854775807 to 9223372036854775807: 18446744073709551616");
    }
}
