package dev.ferry.serve;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A daemon in a JVM of its own, for tests that measure its memory: over the embedded store (profile none) in
 * {@code args[0]}/upstream, its cache in {@code args[0]}/cache, 1 MiB blocks. Prints {@code ready <port>}, then
 * answers each line {@code heap} on its input with {@code heap <live heap bytes after a full GC> rss <bytes>},
 * until {@code exit} or the end of its input.
 */
public final class DaemonChildMain {
    private DaemonChildMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        ServeConfig config = ServeConfig.defaults().with(Map.of("data-dir", dir.resolve("upstream").toString(),
                "cache-dir", dir.resolve("cache").toString(), "port", "0", "profile", "none", "cache-size", "2GiB",
                "block-size", "1MiB"));
        try (Daemon daemon = Daemon.start(config)) {
            System.out.println("ready " + daemon.port());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            for (String line = in.readLine(); line != null && !line.equals("exit"); line = in.readLine()) {
                if (line.equals("heap")) {
                    System.out.println("heap " + liveHeap() + " rss " + rss());
                    System.out.flush();
                }
            }
        }
    }

    private static long liveHeap() {
        for (int i = 0; i < 3; i++) {
            System.gc(); // a full collection with G1: what is left is what is held
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** The resident set from /proc (Linux); -1 elsewhere. */
    private static long rss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (Exception ignored) {
            // not Linux
        }
        return -1;
    }
}
