package dev.ferry.cache;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The local tier's folder, named in one place for every part that touches it:
 * <pre>
 * dir/blocks/          the block files ({@link BlockFile#pathFor}), each renamed into place whole
 * dir/tmp/             blocks being written, spills of refused blocks, the snapshot before its rename
 * dir/index.snapshot   the index at a clean close: the clean-shutdown marker ({@link CacheRecovery})
 * dir/.lock            locked by the one process using the folder
 * </pre>
 * Used by the running cache, its recovery, and {@link CacheVerifier} (which works on a folder no cache has open).
 */
record CacheLayout(Path dir) {
    static final String BLOCKS = "blocks";
    static final String TMP = "tmp";
    static final String SNAPSHOT = "index.snapshot";
    static final String LOCK = ".lock";

    CacheLayout {
        Objects.requireNonNull(dir, "dir is null");
    }

    Path blocks() {
        return dir.resolve(BLOCKS);
    }

    Path tmp() {
        return dir.resolve(TMP);
    }

    Path snapshot() {
        return dir.resolve(SNAPSHOT);
    }

    Path lock() {
        return dir.resolve(LOCK);
    }
}
