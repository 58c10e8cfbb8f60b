package dev.ferry.serve.front;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The folder where request bodies and copy sources lie on local disk while they are checked and written: in the
 * local tier's folder, emptied when the daemon starts (what a crash left there belongs to no request).
 */
public final class SpoolFolder {
    private SpoolFolder() {
    }

    /** {@code <cacheDir>/spool}, created, and emptied. */
    public static Path prepare(Path cacheDir) throws IOException {
        Path spool = cacheDir.resolve("spool");
        Files.createDirectories(spool);
        try (Stream<Path> s = Files.list(spool)) {
            for (Path p : s.toList()) {
                Files.deleteIfExists(p);
            }
        }
        return spool;
    }
}
