package dev.ferry.cli;

import dev.ferry.cli.errors.UserError;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code ferry mount}: the local tier as a POSIX file system. The implementation (module {@code mount}) needs
 * Java 22 (FFM); the CLI builds on 21, so it is found at run time and its absence is explained.
 */
@Command(name = "mount", mixinStandardHelpOptions = true,
        description = {"Mount the object store at MOUNTPOINT through the local tier (FUSE): buckets are folders, objects files.",
                "Reads are pinned to the version a file was opened at and read ahead when sequential; files written are",
                "journaled locally when fsync'd or closed and uploaded in the background (--write-through: uploaded at close).",
                "Runs until Ctrl-C or SIGTERM, which unmount. See docs/mount.md."})
final class MountCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "MOUNTPOINT", description = "An existing empty folder.")
    String mountpoint;

    @Option(names = "--store-root", paramLabel = "DIR", description = "A folder to use as the object store (buckets are subfolders).")
    String storeRoot;

    @Option(names = "--upstream", paramLabel = "URL", description = "S3 endpoint (credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY).")
    String upstream;

    @Option(names = "--cache-dir", paramLabel = "DIR", description = "The local tier's folder (default ~/.ferry/mount-cache).")
    String cacheDir;

    @Option(names = "--cache-size", paramLabel = "SIZE", description = "Local tier capacity (default 10GiB; 0: none, over a ferry daemon whose tier caches).")
    String cacheSize;

    @Option(names = "--block-size", paramLabel = "SIZE", description = "Cache block size (default 4MiB).")
    String blockSize;

    @Option(names = "--read-ahead", paramLabel = "SIZE", description = "How far ahead of a sequential reader to fetch; a file of "
            + "at most this size is fetched whole at its first read (default 64MiB; 0: off).")
    String readAhead;

    @Option(names = "--metadata-ttl", paramLabel = "DURATION", description = "How long a size and ETag (from a listing or a HEAD) are "
            + "trusted, by the mount and the kernel; an object replaced upstream is seen after this (default 60s; 0: every open asks).")
    String metadataTtl;

    @Option(names = "--read-only", description = "Refuse every write (EROFS).")
    boolean readOnly;

    @Option(names = "--write-through", description = "Upload a written file before close (or fsync) returns, instead of write-back.")
    boolean writeThrough;

    @Option(names = "--write-back-quota", paramLabel = "SIZE", description = "Written bytes kept locally awaiting upload (default 10GiB).")
    String writeBackQuota;

    @Option(names = "--flush-timeout", paramLabel = "DURATION", description = "At unmount, how long to wait for pending uploads (default 60s).")
    String flushTimeout;

    @Option(names = "--first-byte-timeout", paramLabel = "DURATION", description = "How long a read waits for the store to answer (default 10s).")
    String firstByteTimeout;

    @Option(names = "--verify", paramLabel = "WHEN", description = "When a cached block is checked against its CRC32C before a read "
            + "returns its bytes: on-load (default: unless they are provably the bytes last checked), always, or the opt-outs "
            + "first-read and never, which return a block corrupted on disk while mounted.")
    String verify;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("mountpoint", mountpoint);
        put(settings, "store-root", storeRoot);
        put(settings, "upstream", upstream);
        put(settings, "cache-dir", cacheDir);
        put(settings, "cache-size", cacheSize);
        put(settings, "block-size", blockSize);
        put(settings, "read-ahead", readAhead);
        put(settings, "metadata-ttl", metadataTtl);
        put(settings, "write-back-quota", writeBackQuota);
        put(settings, "flush-timeout", flushTimeout);
        put(settings, "first-byte-timeout", firstByteTimeout);
        put(settings, "verify", verify);
        settings.put("read-only", Boolean.toString(readOnly));
        settings.put("write-through", Boolean.toString(writeThrough));
        Method run;
        try {
            run = Class.forName("dev.ferry.mount.MountMain").getMethod("run", Map.class, PrintWriter.class, PrintWriter.class);
        } catch (ClassNotFoundException | NoSuchMethodException | UnsupportedClassVersionError e) {
            throw new UserError("ferry mount needs Java 22 or newer (FUSE through the FFM API), and this ferry runs on Java "
                    + Runtime.version().feature() + " or was built without it; install a JDK 22+ and run ./ferry again (it rebuilds).", 1);
        }
        try {
            return (Integer) run.invoke(null, settings, spec.commandLine().getOut(), spec.commandLine().getErr());
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void put(Map<String, String> settings, String key, String value) {
        if (value != null) {
            settings.put(key, value);
        }
    }
}
