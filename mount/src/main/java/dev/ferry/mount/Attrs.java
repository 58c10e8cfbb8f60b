package dev.ferry.mount;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.cryptomator.jfuse.api.Stat;

/** What {@code stat} shows: folders and files owned by the mounting user, read-only modes on a read-only mount. Immutable. */
final class Attrs {
    private final boolean readOnly;
    private final int uid;
    private final int gid;

    Attrs(boolean readOnly) throws IOException {
        this.readOnly = readOnly;
        this.uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        this.gid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:gid");
    }

    void dir(Stat stat) {
        stat.setMode(Stat.S_IFDIR | (readOnly ? 0555 : 0755));
        stat.setNLink((short) 2);
        stat.setUid(uid);
        stat.setGid(gid);
        stat.setSize(4096);
    }

    void file(Stat stat, long size, Instant modified) {
        stat.setMode(Stat.S_IFREG | (readOnly ? 0444 : 0644));
        stat.setNLink((short) 1);
        stat.setUid(uid);
        stat.setGid(gid);
        stat.setSize(size);
        stat.mTime().set(modified);
        stat.cTime().set(modified);
        stat.aTime().set(modified);
    }
}
