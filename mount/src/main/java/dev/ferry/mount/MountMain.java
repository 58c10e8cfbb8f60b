package dev.ferry.mount;

import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Runs {@code ferry mount} until SIGINT or SIGTERM (a shutdown hook unmounts) or until the mount is unmounted
 * from outside. The CLI calls {@link #run} by reflection, since the CLI builds on Java 21 and this module needs 22.
 */
public final class MountMain {
    private MountMain() {
    }

    /** Mounts with {@code settings} (keys of {@link MountConfig#KEYS}) and blocks; returns the exit code. */
    public static int run(Map<String, String> settings, PrintWriter out, PrintWriter err) {
        MountConfig config;
        try {
            config = MountConfig.from(settings);
        } catch (IllegalArgumentException e) {
            err.println("ferry: " + e.getMessage());
            return 2;
        }
        Mount mount;
        try {
            mount = Mount.start(config, Clock.system(), note -> err.println("ferry: " + note));
        } catch (FuseCheck.FuseUnavailableException e) {
            err.println("ferry: " + e.getMessage());
            return 1;
        } catch (IOException | RuntimeException e) {
            err.println("ferry: cannot mount at " + config.mountpoint() + ": " + e.getMessage());
            return 1;
        }
        out.println("ferry: mounted " + mount.description() + " at " + config.mountpoint() + " ("
                + (config.readOnly() ? "read-only" : config.writeThrough() ? "write-through" : "write-back")
                + (config.hasLocalTier() ? ", local tier " + config.cacheDir() : ", no local tier") + "); Ctrl-C or SIGTERM unmounts.");
        java.util.concurrent.atomic.AtomicBoolean stopping = new java.util.concurrent.atomic.AtomicBoolean();
        Thread hook = new Thread(() -> {
            stopping.set(true);
            try {
                mount.close();
                err.println("ferry: unmounted " + config.mountpoint() + "; the store saw " + mount.meter().describe() + ".");
            } catch (IOException | RuntimeException e) {
                err.println("ferry: unmounting " + config.mountpoint() + " failed: " + e.getMessage());
            }
        }, "ferry-unmount");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            while (FuseCheck.isMounted(config.mountpoint())) {
                Thread.sleep(1000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            err.println("ferry: cannot read /proc/self/mountinfo: " + e.getMessage());
        }
        if (stopping.get()) {
            return 0; // the hook is unmounting
        }
        err.println("ferry: " + config.mountpoint() + " was unmounted from outside; stopping.");
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
            mount.close();
            err.println("ferry: the store saw " + mount.meter().describe() + ".");
        } catch (IllegalStateException shuttingDown) {
            return 0; // the hook is already unmounting
        } catch (IOException e) {
            err.println("ferry: closing the local tier failed: " + e.getMessage());
            return 1;
        }
        return 0;
    }

    /** {@code MountMain MOUNTPOINT [--key value]...}: the same as {@code ferry mount}, for tests and scripts. */
    public static void main(String[] args) {
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("--")) {
                String key = args[i].substring(2);
                boolean flag = MountConfig.settings().stream().anyMatch(s -> s.key().equals(key) && s.isSwitch());
                settings.put(key, flag ? "true" : (i + 1 < args.length ? args[++i] : ""));
            } else {
                settings.put("mountpoint", args[i]);
            }
        }
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        System.exit(run(settings, out, err));
    }
}
