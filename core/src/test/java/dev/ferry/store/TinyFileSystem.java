package dev.ferry.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A real, small file system for disk-full tests: a tmpfs of a given size mounted on a folder. Mounting
 * needs root; elsewhere the calling test is skipped, with the reason printed. Close it to unmount.
 */
public final class TinyFileSystem implements AutoCloseable {
    private final Path mount;

    private TinyFileSystem(Path mount) {
        this.mount = mount;
    }

    /** Mounts a tmpfs of {@code size} (as mount takes it: {@code 1m}, {@code 3m}) on {@code dir}, or skips the test. */
    public static TinyFileSystem mount(Path dir, String size, String test) throws IOException, InterruptedException {
        Path mount = Files.createDirectories(dir);
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", mount.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        boolean mounted = p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        if (!mounted) {
            System.out.println("SKIPPED " + test + ": cannot mount a tmpfs here (" + out + ")");
        }
        Assumptions.assumeTrue(mounted, "cannot mount a tmpfs here: " + out);
        return new TinyFileSystem(mount);
    }

    public Path path() {
        return mount;
    }

    @Override
    public void close() throws IOException, InterruptedException {
        new ProcessBuilder("umount", "-l", mount.toString()).start().waitFor(30, TimeUnit.SECONDS);
    }
}
