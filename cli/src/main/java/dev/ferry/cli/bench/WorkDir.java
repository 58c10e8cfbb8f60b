package dev.ferry.cli.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The folder a demo or benchmark works in: the one the user gave (kept), or a temporary one (removed on
 * close).
 */
public final class WorkDir implements AutoCloseable {
    private final Path path;
    private final boolean temporary;

    private WorkDir(Path path, boolean temporary) {
        this.path = path;
        this.temporary = temporary;
    }

    /** {@code given} (created if missing), or a new temporary folder named with {@code prefix} when null. */
    public static WorkDir of(Path given, String prefix) throws IOException {
        return given == null
                ? new WorkDir(Files.createTempDirectory(prefix), true)
                : new WorkDir(Files.createDirectories(given), false);
    }

    public Path path() {
        return path;
    }

    @Override
    public void close() throws IOException {
        if (temporary) {
            deleteTree(path);
        }
    }

    /** Deletes a folder and everything in it; a missing folder is fine. */
    public static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
