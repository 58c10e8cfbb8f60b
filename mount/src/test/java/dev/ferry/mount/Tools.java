package dev.ferry.mount;

import dev.ferry.time.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/** Real tools for the mount tests: FUSE present (or the test fails under FERRY_REQUIRE_REAL_CLIENTS=1), shell commands. */
final class Tools {
    private Tools() {
    }

    /** FUSE (the device, libfuse3, fusermount3) must be here; scripts/test installs fuse3. */
    static void requireFuse() {
        String missing = null;
        if (!Files.exists(Path.of("/dev/fuse"))) {
            missing = "/dev/fuse";
        } else if (FuseCheck.onPath("fusermount3") == null) {
            missing = "fusermount3 (fuse3)";
        } else {
            try {
                FuseCheck.findLibrary(FuseCheck.LIBRARY_DIRS);
            } catch (IOException e) {
                missing = "libfuse3 (fuse3)";
            }
        }
        if (missing == null && FuseCheck.onPath("python3") == null) {
            missing = "python3";
        }
        if (missing == null) {
            return;
        }
        String reason = missing + " is not available here; scripts/test installs fuse3";
        if ("1".equals(System.getenv("FERRY_REQUIRE_REAL_CLIENTS"))) {
            throw new AssertionError(reason);
        }
        System.out.println("SKIPPED: " + reason);
        Assumptions.abort(reason);
    }

    /** A Python module (torch) must be importable; scripts/test installs it. */
    static void requirePythonModule(String module) throws IOException, InterruptedException {
        if (run("python3", "-c", "import " + module).exitCode() == 0) {
            return;
        }
        String reason = "the Python module " + module + " is not installed here; scripts/test installs it";
        if ("1".equals(System.getenv("FERRY_REQUIRE_REAL_CLIENTS"))) {
            throw new AssertionError(reason);
        }
        System.out.println("SKIPPED: " + reason);
        Assumptions.abort(reason);
    }

    record Result(int exitCode, String output) {
    }

    static Result run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + String.join(" ", command));
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    /** Runs a bash command line; fails the test when it exits non-zero. Returns its output. */
    static String sh(String commandLine) throws IOException, InterruptedException {
        Result r = run("bash", "-c", "set -o pipefail; " + commandLine);
        if (r.exitCode() != 0) {
            throw new AssertionError("'" + commandLine + "' exited " + r.exitCode() + ": " + r.output());
        }
        return r.output();
    }

    /**
     * Starts a mount process and waits until the mountpoint answers and the process says it is mounted: until then
     * its main thread may be in jfuse's mount probe (a stat of its own mountpoint), and a SIGKILL there leaves that
     * thread waiting on a FUSE connection whose server is gone, which holds the connection open (the process a
     * zombie, the mountpoint hung rather than stale) until it is aborted through fusectl.
     */
    static Process startMount(List<String> command, Path mountpoint) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(mountpoint.resolveSibling(mountpoint.getFileName() + ".log").toFile()).start();
        Path log = mountpoint.resolveSibling(mountpoint.getFileName() + ".log");
        try {
            Await.until("the mount at " + mountpoint, Duration.ofSeconds(30), () -> {
                if (!p.isAlive()) {
                    throw new AssertionError("the mount process exited " + p.exitValue() + ": " + Files.readString(log));
                }
                return FuseCheck.isMounted(mountpoint) && Files.isDirectory(mountpoint.resolve("data"))
                        && Files.readString(log).contains("ferry: mounted");
            });
            return p;
        } catch (AssertionError e) {
            p.destroyForcibly();
            throw e;
        }
    }
}
