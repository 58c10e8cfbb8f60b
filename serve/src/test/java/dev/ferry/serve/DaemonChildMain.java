package dev.ferry.serve;

import java.nio.file.Path;
import java.util.Map;

/**
 * A daemon in its own JVM, for tests that must see what it survives with a small heap: {@code main(storeRoot,
 * cacheDir)} serves the folder on a free loopback port with the default settings (4 MiB blocks), prints
 * {@code port N} and {@code ready}, and stops when its standard input closes.
 */
public final class DaemonChildMain {
    private DaemonChildMain() {
    }

    public static void main(String[] args) throws Exception {
        ServeConfig config = ServeConfig.defaults().with(Map.of("store-root", Path.of(args[0]).toString(), "cache-dir",
                Path.of(args[1]).toString(), "port", "0", "cache-size", "1GiB"));
        try (Daemon daemon = Daemon.start(config)) {
            System.out.println("port " + daemon.port());
            System.out.println("ready");
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the test closes our input
            }
        }
    }
}
