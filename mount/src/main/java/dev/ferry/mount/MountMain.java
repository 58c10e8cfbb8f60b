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

    /** What is wrong with {@code settings}, in one sentence, or null: checked before a mount starts in the background. */
    public static String check(Map<String, String> settings) {
        try {
            MountConfig.from(settings);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
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
        Unmount unmount = new Unmount(mount, config, err);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping.set(true);
            unmount.run();
        }, "ferry-unmount"));
        try {
            while (FuseCheck.isMounted(config.mountpoint())) {
                Thread.sleep(1000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            err.println("ferry: cannot read /proc/self/mountinfo: " + e.getMessage());
        }
        if (!stopping.get()) {
            err.println("ferry: " + config.mountpoint() + " was unmounted from outside; stopping.");
        }
        // the hook, if a SIGTERM comes meanwhile, waits for this to finish: the JVM halts only after its hooks
        return unmount.run();
    }

    /**
     * Closes the mount once, whoever asks first (the shutdown hook or an unmount from outside), and says what the
     * store saw; a second caller waits for the first and gets its status.
     */
    private static final class Unmount {
        private final Mount mount;
        private final MountConfig config;
        private final PrintWriter err;
        private Integer status;

        Unmount(Mount mount, MountConfig config, PrintWriter err) {
            this.mount = mount;
            this.config = config;
            this.err = err;
        }

        synchronized int run() {
            if (status == null) {
                try {
                    mount.close();
                    err.println("ferry: unmounted " + config.mountpoint() + "; the store saw " + mount.meter().describe() + ".");
                    status = 0;
                } catch (IOException | RuntimeException e) {
                    err.println("ferry: unmounting " + config.mountpoint() + " failed: " + e.getMessage());
                    status = 1;
                }
            }
            return status;
        }
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
