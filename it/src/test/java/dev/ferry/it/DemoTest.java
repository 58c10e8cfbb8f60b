package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ferry demo}, shrunk, in its own process: it runs to the end and reports every step. */
class DemoTest {
    @TempDir
    Path dir;

    @Test
    void demo_runsEndToEnd() throws Exception {
        Path log = dir.resolve("demo.log");
        Process p = Servers.ferry(log, "demo", "--shards", "4", "--shard-mib", "2", "--sample-seconds", "2", "--dir", dir.resolve("store").toString());
        assertThat(p.waitFor(Duration.ofMinutes(2).toSeconds(), java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        String out = Files.readString(log);
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("1. dataset: 4 shards of 2 MiB")
                .contains("one GET per shard").contains("parallel 2 MiB ranged GETs")
                .contains("bare client").contains("governed + retried")
                .contains("the governor keeps")
                .contains("epoch 2").contains("100%").contains("ferry sim, 3 epochs");
    }
}
