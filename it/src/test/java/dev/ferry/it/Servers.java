package dev.ferry.it;

import dev.ferry.time.Await;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/** Helpers for tests that start real servers and real clients as separate processes. */
final class Servers {
    private Servers() {
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static void awaitPort(int port, Duration timeout, Process process) throws IOException, InterruptedException {
        try {
            Await.listening(port, process, timeout);
        } catch (AssertionError e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /** A command that runs {@code main} in its own JVM on this test's class path, with quiet logs. */
    static List<String> javaCommand(String main, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main);
        command.addAll(List.of(args));
        return command;
    }

    /** {@code ferry <args>} as its own JVM, on this test's class path: the CLI as a user runs it. */
    static Process ferry(Path log, String... args) throws IOException {
        return ferry(log, java.util.Map.of(), args);
    }

    /** As {@link #ferry(Path, String...)}, with {@code env} added to its environment (credentials for an upstream). */
    static Process ferry(Path log, java.util.Map<String, String> env, String... args) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(javaCommand("dev.ferry.cli.Main", args)).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        return pb.start();
    }

    /** A child JVM and its output, once it has printed "ready". */
    record Child(Process process, java.io.BufferedReader out) {
    }

    /** Starts {@code main} in its own JVM and waits for the line "ready" (lines before it are skipped). */
    static Child readyChild(Class<?> main, String... args) throws IOException {
        Process process = new ProcessBuilder(javaCommand(main.getName(), args)).redirectErrorStream(true).start();
        java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream()));
        String line;
        do {
            line = out.readLine();
        } while (line != null && !line.equals("ready"));
        if (line == null) {
            throw new AssertionError(main.getSimpleName() + " ended before saying 'ready' (exit " + process.onExit().join().exitValue() + ")");
        }
        return new Child(process, out);
    }

    static void stop(Process p) throws InterruptedException {
        if (p != null) {
            p.destroy();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
            }
        }
    }

    /** Where a real client is required (the project's test script says so), its absence fails; else skips. */
    static void requireTool(boolean present, String what) {
        if (present) {
            return;
        }
        String reason = what + " is not installed here; scripts/test installs it";
        if ("1".equals(System.getenv("FERRY_REQUIRE_REAL_CLIENTS"))) {
            throw new AssertionError(reason);
        }
        System.out.println("SKIPPED: " + reason);
        Assumptions.abort(reason);
    }

    /** The first executable named {@code name} on PATH, or null. */
    static Path onPath(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /** Runs a command to completion and returns its exit code and output. */
    record Result(int exitCode, String output) {
    }

    static Result run(Duration timeout, java.util.Map<String, String> env, String... command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not finish within " + timeout);
        }
        return new Result(p.exitValue(), new String(out, java.nio.charset.StandardCharsets.UTF_8));
    }
}
