package dev.ferry.cli;

import dev.ferry.cli.errors.UserError;
import dev.ferry.time.Clock;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code ferry mount} without {@code --foreground}, as Mountpoint for S3 and s3fs behave: the same command runs again
 * in a process of its own (in a session of its own, so that the shell's Ctrl-C and hang-up do not reach it, its
 * messages in a log file), and this one returns once the mount point is mounted, or says why it could not be.
 */
final class BackgroundMount {
    private static final long WAIT_NANOS = 90_000_000_000L;

    private BackgroundMount() {
    }

    /** Starts {@code args} (ferry's whole command line) again with {@code --foreground}; 0 once {@code mountpoint} is mounted, else the child's exit status. */
    static int start(Path mountpoint, Path log, List<String> args, PrintWriter out, PrintWriter err) {
        Path mp = mountpoint.toAbsolutePath().normalize();
        Path logFile = log != null ? log : Path.of(System.getProperty("user.home"), ".ferry", "logs",
                "mount-" + mp.toString().replaceAll("[^A-Za-z0-9._-]+", "_").replaceAll("^_+", "") + ".log");
        List<String> command = new ArrayList<>();
        Path setsid = Path.of("/usr/bin/setsid");
        if (Files.isExecutable(setsid)) {
            command.addAll(List.of(setsid.toString(), "--wait")); // --wait: should setsid fork, it stays until the mount ends
        }
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        command.addAll(args); // the whole command line as typed: "mount" and any option before it included
        command.add("--foreground");
        Process child;
        long logStart;
        try {
            Files.createDirectories(logFile.toAbsolutePath().getParent());
            logStart = Files.exists(logFile) ? Files.size(logFile) : 0;
            child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        } catch (IOException e) {
            throw new UserError("cannot start the mount in the background: " + e.getMessage(), 1);
        }
        Clock clock = Clock.system(); // the CLI is its own composition root
        long deadline = clock.nanoTime() + WAIT_NANOS;
        try {
            while (clock.nanoTime() < deadline) {
                if (mounted(mp)) {
                    out.println("ferry mount: " + mp + " mounted, in the background (pid " + child.pid() + ", messages in " + logFile
                            + "); unmount with 'fusermount3 -u " + mp + "'.");
                    return 0;
                }
                if (!child.isAlive()) {
                    err.print(since(logFile, logStart));
                    err.flush();
                    return child.exitValue() == 0 ? 1 : child.exitValue();
                }
                Thread.sleep(100);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            child.destroy();
            throw new UserError("cannot read /proc/self/mountinfo to see the mount: " + e.getMessage(), 1);
        }
        child.destroy();
        throw new UserError(mp + " was not mounted within 90 s; its messages are in " + logFile, 1);
    }

    /** True when {@code mp} is a mount point now (/proc/self/mountinfo's fifth field, octal escapes undone). */
    static boolean mounted(Path mp) throws IOException {
        String want = mp.toString();
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8)) {
            String[] f = line.split(" ");
            if (f.length > 4 && unescape(f[4]).equals(want)) {
                return true;
            }
        }
        return false;
    }

    private static String unescape(String field) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 3 < field.length()) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** What the child wrote to the log after {@code from}. */
    private static String since(Path log, long from) {
        try {
            byte[] all = Files.readAllBytes(log);
            return new String(all, (int) Math.min(from, all.length), (int) Math.max(0, all.length - from), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "ferry: the mount stopped; its log " + log + " cannot be read: " + e.getMessage() + "\n";
        }
    }
}
