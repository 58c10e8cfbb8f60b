package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.serve.Daemon;
import dev.ferry.serve.ServeConfig;
import dev.ferry.serve.membership.GroupSpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code ferry serve}'s command line: every setting has its flag, and the flags the docs show reach the daemon. */
class ServeCommandTest {
    private static ServeCommand parse(String... args) {
        ServeCommand command = new ServeCommand();
        new CommandLine(command).parseArgs(args);
        return command;
    }

    @Test
    void everyConfigKey_hasAFlagOfTheSameName() {
        CommandLine.Model.CommandSpec spec = new CommandLine(new ServeCommand()).getCommandSpec();
        for (String key : ServeConfig.KEYS) {
            if (key.startsWith("max-") || key.equals("write-back-quota")) {
                continue; // limits meant for the YAML file only
            }
            assertThat(spec.findOption("--" + key)).as("ferry serve --" + key).isNotNull();
        }
    }

    @Test
    void groupSelfAndSharedTier_flags_setTheConfig(@TempDir Path dir) throws Exception {
        ServeConfig c = parse("--store-root", dir.toString(), "--group", "http://10.0.0.1:9099,http://10.0.0.2:9099",
                "--self", "http://10.0.0.2:9099", "--shared-tier", "/mnt/lustre/ferry").config();
        assertThat(((GroupSpec.Static) c.group()).members()).containsExactly(URI.create("http://10.0.0.1:9099"),
                URI.create("http://10.0.0.2:9099"));
        assertThat(parse("--store-root", dir.toString(), "--group", "dns:ferry.ml.svc.cluster.local:9099").config().group())
                .isEqualTo(new GroupSpec.Dns("ferry.ml.svc.cluster.local", 9099, null));
        assertThat(parse("--store-root", dir.toString(), "--group", "etcd:http://etcd:2379/ferry/train").config().group())
                .isEqualTo(new GroupSpec.Etcd(URI.create("http://etcd:2379"), "/ferry/train/"));
        assertThat(c.self()).isEqualTo(URI.create("http://10.0.0.2:9099"));
        assertThat(c.sharedTier()).isEqualTo(Path.of("/mnt/lustre/ferry"));
    }

    @Test
    void selfOutsideTheGroup_isOneSentence_exit2() {
        MainTest.Run r = MainTest.run("serve", "--store-root", "/tmp/ferry-never-used", "--group", "http://10.0.0.1:9099",
                "--self", "http://10.0.0.9:9099");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip()).startsWith("ferry: self (http://10.0.0.9:9099) must be one of the group's members");
        assertThat(r.err().strip().lines().count()).isEqualTo(1);
    }

    @Test
    void aDaemonStartedFromTheFlags_readsThroughItsGroupAndSharedTier(@TempDir Path dir) throws Exception {
        Path data = Files.createDirectories(dir.resolve("store/data"));
        byte[] bytes = new byte[300_000];
        new Random(3).nextBytes(bytes);
        Files.write(data.resolve("shard.tar"), bytes);
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        String self = "http://127.0.0.1:" + port;
        ServeConfig config = parse("--store-root", dir.resolve("store").toString(), "--cache-dir", dir.resolve("cache").toString(),
                "--cache-size", "64MiB", "--port", Integer.toString(port), "--group", self, "--self", self,
                "--shared-tier", dir.resolve("shared").toString()).config();
        try (Daemon daemon = Daemon.start(config); HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<byte[]> read = http.send(HttpRequest.newBuilder(daemon.endpoint().resolve("/data/shard.tar")).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(read.body()).isEqualTo(bytes);
            try (var copies = Files.walk(dir.resolve("shared"))) {
                assertThat(copies.filter(Files::isRegularFile).map(p -> p.getFileName().toString()))
                        .as("the copy the shared tier keeps").anyMatch(name -> name.startsWith("shard.tar@"));
            }
            JsonNode status = new ObjectMapper().readTree(http.send(HttpRequest.newBuilder(daemon.endpoint().resolve("/_ferry/v1/status"))
                    .build(), HttpResponse.BodyHandlers.ofString()).body());
            assertThat(status.path("tiers").has("shared")).as("status names the shared tier").isTrue();
            assertThat(status.path("tiers").has("peer")).as("status names the group").isTrue();
        }
    }
}
