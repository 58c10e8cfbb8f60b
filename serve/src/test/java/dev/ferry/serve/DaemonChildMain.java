package dev.ferry.serve;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A daemon in its own JVM, for tests that must see what it survives with a small heap or what memory it holds:
 * {@code main(key=value ...)} serves with the default settings and those given, on a free loopback port, prints
 * {@code port N} and {@code ready}, then answers each line {@code heap} on its input with {@code heap <live heap
 * bytes after a full GC> rss <bytes>}, until a line {@code exit} or the end of its input.
 */
public final class DaemonChildMain {
    private DaemonChildMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> settings = new HashMap<>(Map.of("port", "0"));
        for (String arg : args) {
            int eq = arg.indexOf('=');
            settings.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        try (Daemon daemon = Daemon.start(ServeConfig.defaults().with(settings))) {
            System.out.println("port " + daemon.port());
            System.out.println("ready");
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
