package dev.ferry.cli;

import dev.ferry.cli.errors.UserError;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The folders a command is told to serve: a missing one is a mistyped path unless the user asked for it to be made. */
final class Folders {
    private Folders() {
    }

    /** {@code dir}, given as {@code flag}, exists as a folder, or is created when {@code create}; else one sentence and exit 2. */
    static void requireOrCreate(Path dir, String flag, boolean create) throws IOException {
        if (Files.isDirectory(dir)) {
            return;
        }
        if (Files.exists(dir)) {
            throw new UserError(flag + " " + dir + " is not a directory.");
        }
        if (!create) {
            throw new UserError(flag + " " + dir + " does not exist: check the path, or add --create to start an empty store there.");
        }
        Files.createDirectories(dir);
    }
}
