package dev.ferry.cli;

import dev.ferry.cli.errors.UserError;
import dev.ferry.settings.Setting;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code ferry mount}: the local tier as a POSIX file system. The implementation (module {@code mount}) needs
 * Java 22 (FFM); the CLI builds on 21, so it is found at run time and its absence is explained. Its flags come
 * from {@code MountConfig}'s table (the tier settings every front end shares and the mount's own), found the same
 * way; without the module, any flags are taken and the command says what is missing.
 */
@Command(name = "mount", mixinStandardHelpOptions = true, modelTransformer = MountCommand.Flags.class,
        description = {"Mount the object store at MOUNTPOINT through the local tier (FUSE): buckets are folders, objects files.",
                "Reads are pinned to the version a file was opened at and read ahead when sequential; files written are",
                "journaled locally when fsync'd or closed and uploaded in the background (--write-through: uploaded at close).",
                "Mounts, then returns while the mount runs on in the background (its messages in --log); with --foreground it runs",
                "until Ctrl-C or SIGTERM, which unmount. Unmount a background mount with 'fusermount3 -u MOUNTPOINT'. See docs/mount.md."})
final class MountCommand implements Callable<Integer> {
    private static final String CONFIG = "dev.ferry.mount.MountConfig";
    private static final String MAIN = "dev.ferry.mount.MountMain";

    @Parameters(index = "0", paramLabel = "MOUNTPOINT", description = "An existing empty folder.")
    String mountpoint;

    @Option(names = "--foreground", description = "Stay in the foreground until unmounted (Ctrl-C unmounts); by default ferry mount returns "
            + "once mounted and the mount runs on in the background.")
    boolean foreground;

    @Option(names = "--log", paramLabel = "FILE", description = "Where a background mount writes its messages (default: "
            + "~/.ferry/logs/mount-NAME.log, NAME from the mount point).")
    Path log;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        List<Setting<?>> rows = rows();
        Method run;
        try {
            if (rows == null) {
                throw new ClassNotFoundException(CONFIG);
            }
            run = Class.forName(MAIN).getMethod("run", Map.class, PrintWriter.class, PrintWriter.class);
        } catch (ClassNotFoundException | NoSuchMethodException | UnsupportedClassVersionError e) {
            throw new UserError("ferry mount needs Java 22 or newer (FUSE through the FFM API), and this ferry runs on Java "
                    + Runtime.version().feature() + " or was built without it; install a JDK 22+ and run ./ferry again (it rebuilds).", 1);
        }
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("mountpoint", mountpoint);
        settings.putAll(SettingFlags.given(spec, rows));
        try {
            if (!foreground) {
                String problem = (String) Class.forName(MAIN).getMethod("check", Map.class).invoke(null, settings);
                if (problem != null) { // said here, before anything starts in the background, as the mount itself says it
                    spec.commandLine().getErr().println("ferry: " + problem);
                    return 2;
                }
                return BackgroundMount.start(Path.of(mountpoint), log, spec.commandLine().getParseResult().originalArgs(),
                        spec.commandLine().getOut(), spec.commandLine().getErr());
            }
            return (Integer) run.invoke(null, settings, spec.commandLine().getOut(), spec.commandLine().getErr());
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        } catch (IllegalAccessException | ClassNotFoundException | NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The rows of {@code MountConfig}'s table, or null when this ferry has no mount module (built or run on Java 21). */
    @SuppressWarnings("unchecked")
    static List<Setting<?>> rows() {
        try {
            return (List<Setting<?>>) Class.forName(CONFIG).getMethod("settings").invoke(null);
        } catch (ClassNotFoundException | NoSuchMethodException | UnsupportedClassVersionError | IllegalAccessException
                | InvocationTargetException e) {
            return null;
        }
    }

    /** Adds a flag for every row of the mount's table; without the module, takes whatever follows (call() explains). */
    static final class Flags implements CommandLine.IModelTransformer {
        @Override
        public CommandSpec transform(CommandSpec spec) {
            List<Setting<?>> rows = rows();
            if (rows == null) {
                spec.parser().unmatchedArgumentsAllowed(true);
            } else {
                SettingFlags.add(spec, rows);
            }
            return spec;
        }
    }
}
