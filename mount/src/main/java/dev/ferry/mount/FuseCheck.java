package dev.ferry.mount;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a mount needs before it starts, each missing piece explained in one sentence: the FUSE device, libfuse3,
 * {@code fusermount3} (for a user other than root), and a mountpoint that is an empty folder. A mountpoint left
 * behind by a mount that died (its FUSE connection gone: "Transport endpoint is not connected") is unmounted
 * lazily with {@code fusermount3 -u -z}, and said so, so a crash never blocks the next mount.
 */
public final class FuseCheck {
    /** Where Debian, Ubuntu, Fedora and Alpine put libfuse3. */
    static final List<Path> LIBRARY_DIRS = List.of(Path.of("/usr/lib/x86_64-linux-gnu"), Path.of("/usr/lib/aarch64-linux-gnu"),
            Path.of("/lib/x86_64-linux-gnu"), Path.of("/usr/lib64"), Path.of("/usr/lib"), Path.of("/lib64"), Path.of("/lib"),
            Path.of("/usr/local/lib"));

    private FuseCheck() {
    }

    /** Thrown with a sentence a user can act on. */
    public static final class FuseUnavailableException extends IOException {
        private static final long serialVersionUID = 1L;

        public FuseUnavailableException(String message) {
            super(message);
        }
    }

    /** The libfuse3 shared library to load: the first {@code libfuse3.so} or {@code libfuse3.so.3} in {@code dirs}. */
    public static Path findLibrary(List<Path> dirs) throws FuseUnavailableException {
        for (Path dir : dirs) {
            for (String name : List.of("libfuse3.so", "libfuse3.so.3")) {
                Path p = dir.resolve(name);
                if (Files.isReadable(p)) {
                    return p;
                }
            }
        }
        throw new FuseUnavailableException("FUSE is not available: libfuse3 is not installed; install fuse3 (apt-get install fuse3).");
    }

    /** Checks the FUSE device (and, for a user other than root, fusermount3) and returns libfuse3's path. */
    public static Path check(Path device, List<Path> libraryDirs, boolean root) throws FuseUnavailableException {
        if (!Files.exists(device)) {
            throw new FuseUnavailableException("FUSE is not available: " + device + " is missing (load the fuse kernel module with "
                    + "'modprobe fuse', or give a container --device /dev/fuse --cap-add SYS_ADMIN).");
        }
        if (!Files.isReadable(device) || !Files.isWritable(device)) {
            throw new FuseUnavailableException("FUSE is not permitted: this user cannot open " + device
                    + " (run as root, or give the user read and write access to it).");
        }
        Path lib = findLibrary(libraryDirs);
        if (!root && onPath("fusermount3") == null) {
            throw new FuseUnavailableException("FUSE is not available: fusermount3 is not installed; install fuse3 (apt-get install fuse3).");
        }
        return lib;
    }

    /** The line of /proc/self/mountinfo that mounts {@code mountpoint}, or null. */
    static String mountEntry(Path mountpoint) throws IOException {
        String target = mountpoint.toString();
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String[] f = line.split(" ");
            if (f.length > 4 && unescape(f[4]).equals(target)) {
                return line;
            }
        }
        return null;
    }

    /** True when {@code mountpoint} is mounted now (by any file system). */
    public static boolean isMounted(Path mountpoint) throws IOException {
        return mountEntry(mountpoint) != null;
    }

    private static String unescape(String s) {
        return s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\");
    }

    /**
     * Makes {@code mountpoint} ready: unmounts a stale FUSE mount there (returning a sentence that says so), or
     * refuses a live mount or a folder that is missing or not empty. Returns null when nothing needed doing.
     */
    public static String prepareMountpoint(Path mountpoint) throws IOException {
        String note = null;
        String entry = mountEntry(mountpoint);
        if (entry != null) {
            boolean fuse = entry.contains(" - fuse");
            boolean stale;
            try {
                Files.readAttributes(mountpoint, java.nio.file.attribute.BasicFileAttributes.class);
                stale = false;
            } catch (IOException e) {
                stale = String.valueOf(e.getMessage()).contains("not connected");
            }
            if (!fuse || !stale) {
                throw new FuseUnavailableException(mountpoint + " is already a mount point; unmount it first (fusermount3 -u "
                        + mountpoint + ").");
            }
            run(List.of(onPath("fusermount3") != null ? "fusermount3" : "umount", onPath("fusermount3") != null ? "-u" : "-l",
                    onPath("fusermount3") != null ? "-z" : "", mountpoint.toString()));
            if (mountEntry(mountpoint) != null) {
                throw new FuseUnavailableException(mountpoint + " is left mounted by a mount that ended, and fusermount3 -u -z could not "
                        + "unmount it; run 'fusermount3 -u -z " + mountpoint + "' as its owner.");
            }
            note = mountpoint + " was left mounted by a mount that ended (stale); unmounted it with fusermount3 -u -z.";
        }
        if (!Files.isDirectory(mountpoint)) {
            throw new FuseUnavailableException("the mountpoint " + mountpoint + " is not a folder; create it first (mkdir -p " + mountpoint + ").");
        }
        try (var s = Files.list(mountpoint)) {
            if (s.findAny().isPresent()) {
                throw new FuseUnavailableException("the mountpoint " + mountpoint + " is not empty; mount on an empty folder.");
            }
        }
        return note;
    }

    private static void run(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command.stream().filter(s -> !s.isEmpty()).toList()).redirectErrorStream(true).start();
        try {
            p.getInputStream().readAllBytes();
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while unmounting a stale mount");
        }
    }

    static Path onPath(String name) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(java.io.File.pathSeparator)) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
