package dev.ferry.mount;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The kernel's read-ahead for a FUSE mount's files: the {@code read_ahead_kb} of the mount's backing device,
 * {@code /sys/class/bdi/MAJ:MIN} (MAJ:MIN as {@code /proc/self/mountinfo} names the mount's device).
 *
 * <p>The kernel offers a FUSE file system 128 KiB, and libfuse's init reply can only lower it. So a sequential reader
 * through the mount is read in 128 KiB READs, one round trip through the mount each, however large the kernel may
 * send them (libfuse asks for {@code max_pages} to match {@code max_write}, 1 MiB). Raising the device's window
 * lets the kernel read ahead in READs of up to 1 MiB, several in flight. Only root may write the file; without
 * it, the mount works with the kernel's window.
 */
final class KernelReadAhead {
    static final Path BDI = Path.of("/sys/class/bdi");

    private KernelReadAhead() {
    }

    /** Sets the read-ahead of the FUSE mount at {@code mountpoint} to {@code bytes}; null when done, else why not. */
    static String set(Path mountpoint, long bytes) {
        try {
            Path file = file(mountpoint);
            if (file == null) {
                return mountpoint + " is not a FUSE mount in /proc/self/mountinfo";
            }
            Files.writeString(file, Long.toString(bytes / 1024));
            return null;
        } catch (IOException | RuntimeException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    /** The mount's read-ahead in bytes, as the kernel has it now; -1 when it cannot be read. */
    static long get(Path mountpoint) {
        try {
            Path file = file(mountpoint);
            return file == null ? -1 : Long.parseLong(Files.readString(file).trim()) * 1024;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** {@code /sys/class/bdi/MAJ:MIN/read_ahead_kb} of the FUSE mount at {@code mountpoint}, or null when there is none. */
    private static Path file(Path mountpoint) throws IOException {
        String entry = FuseCheck.mountEntry(mountpoint);
        if (entry == null || !entry.contains(" - fuse")) {
            return null;
        }
        String device = entry.split(" ")[2]; // mountinfo's third field: the device, MAJ:MIN
        return BDI.resolve(device).resolve("read_ahead_kb");
    }
}
