package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release as a user who will not build runs it: {@code scripts/release} makes {@code ferry-VERSION.tar.gz}; unpacked
 * elsewhere and called through a symlink on PATH, with no Maven and no source tree, its {@code ferry} runs the daemon
 * (which answers its status) and names its version; a Java older than 21 is refused in one sentence.
 */
class ReleaseTest {
    @TempDir
    Path dir;

    @Test
    void theTarballRunsFromASymlinkOnPath_withNoBuild() throws Exception {
        Path repo = Path.of(System.getProperty("user.dir")).getParent();
        Servers.Result built = Servers.run(Duration.ofMinutes(10), Map.of(), repo.resolve("scripts/release").toString(),
                dir.resolve("dist").toString());
        assertThat(built.exitCode()).as(built.output()).isZero();
        List<String> lines = built.output().strip().lines().toList();
        Path tarball = Path.of(lines.get(lines.size() - 1));
        assertThat(tarball.getFileName().toString()).matches("ferry-.+\\.tar\\.gz");
        Path unpacked = Files.createDirectories(dir.resolve("opt"));
        assertThat(Servers.run(Duration.ofMinutes(2), Map.of(), "tar", "-C", unpacked.toString(), "-xzf", tarball.toString()).exitCode())
                .isZero();
        Path home;
        try (Stream<Path> s = Files.list(unpacked)) {
            home = s.findFirst().orElseThrow();
        }
        assertThat(home.resolve("bin/ferry")).isExecutable();
        assertThat(home.resolve("deploy/ferry.service")).exists();
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Files.createSymbolicLink(bin.resolve("ferry"), home.resolve("bin/ferry"));
        // only the symlink's folder and the system's: no mvn, no checkout; the Java running this test (21+) as JAVA_HOME
        Map<String, String> env = Map.of("PATH", bin + ":/usr/bin:/bin", "JAVA_HOME", System.getProperty("java.home"));

        Servers.Result version = Servers.run(Duration.ofMinutes(1), env, "bash", "-c", "cd / && ferry --version");
        assertThat(version.exitCode()).as(version.output()).isZero();
        assertThat(version.output()).startsWith("ferry ").doesNotContain("building");

        int port = Servers.freePort();
        ProcessBuilder daemon = new ProcessBuilder(List.of("bash", "-c", "exec ferry serve --port " + port + " --data-dir " + dir.resolve("data")
                + " --cache-dir " + dir.resolve("cache") + " --profile none")).redirectErrorStream(true)
                .redirectOutput(dir.resolve("serve.log").toFile()).directory(dir.toFile());
        daemon.environment().putAll(env); // the launcher found through PATH, as a user runs it
        Process serve = daemon.start();
        try {
            Servers.awaitPort(port, Duration.ofSeconds(60), serve);
            try (HttpClient http = HttpClient.newHttpClient()) {
                HttpResponse<String> status = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/_ferry/v1/status")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(status.statusCode()).isEqualTo(200);
            }
        } finally {
            Servers.stop(serve);
        }

        // a Java older than 21 on PATH and no JAVA_HOME: one sentence, exit 1
        Path old = Path.of("/usr/lib/jvm");
        Path java17 = null;
        if (Files.isDirectory(old)) {
            try (Stream<Path> s = Files.list(old)) {
                java17 = s.filter(p -> p.getFileName().toString().contains("17") && Files.isExecutable(p.resolve("bin/java"))).findFirst()
                        .orElse(null);
            }
        }
        if (java17 != null) {
            Servers.Result refused = Servers.run(Duration.ofMinutes(1), Map.of("PATH", bin + ":" + java17.resolve("bin") + ":/usr/bin:/bin"),
                    "env", "-u", "JAVA_HOME", "bash", "-c", "ferry --version");
            assertThat(refused.exitCode()).isEqualTo(1);
            assertThat(refused.output().strip()).startsWith("ferry: needs Java 21 or newer").hasLineCount(1);
        }
    }
}
