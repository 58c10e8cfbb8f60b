package dev.ferry.mount;

import org.cryptomator.jfuse.api.FuseConnInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What {@code ferry mount} asks of the kernel when libfuse starts it ({@code init}). Stateless. */
final class KernelOptions {
    private static final Logger LOG = LoggerFactory.getLogger(KernelOptions.class);

    private KernelOptions() {
    }

    /**
     * Sets the capabilities the mount wants on {@code conn}; true when the kernel will send no OPEN, FLUSH or RELEASE
     * of files from now on (a read-only mount on a kernel with FUSE's no-open mode).
     */
    static boolean negotiate(FuseConnInfo conn, MountConfig config) {
        // O_TRUNC arrives with open (one whole-object replacement), not as a separate truncate to zero first
        conn.setWant(conn.want() | (conn.capable() & FuseConnInfo.FUSE_CAP_ATOMIC_O_TRUNC));
        // the kernel keeps or drops a file's pages when it is opened, by version (see Reads); dropping them whenever a
        // stat shows a new mtime would also drop the pages a handle of the old version still reads
        conn.setWant(conn.want() & ~FuseConnInfo.FUSE_CAP_AUTO_INVAL_DATA);
        conn.setMaxWrite(1 << 20);
        // A read-only mount has nothing to do when a file is opened or closed, and a warm small file's open and close
        // through FUSE cost more than its read (the kernel holds its pages). Its first OPEN and FLUSH are answered
        // ENOSYS, after which the kernel sends none (FUSE_NO_OPEN_SUPPORT): it opens each file itself, with handle 0,
        // keeping its pages. A version is then a file's, not an open's: the kernel drops the pages when a stat shows a
        // new mtime (Attrs puts the version in it), and reads return the version that stat showed.
        // With --metadata-ttl 0 every open asks the store, and auto_inval_data would make that every read() instead.
        if (config.readOnly() && !config.metadataTtl().isZero()) {
            if ((conn.capable() & FuseConnInfo.FUSE_CAP_NO_OPEN_SUPPORT) != 0) {
                conn.setWant(conn.want() | (conn.capable() & FuseConnInfo.FUSE_CAP_AUTO_INVAL_DATA));
                return true;
            }
            LOG.info("this kernel has no FUSE no-open mode: every open and close of a file is sent to the mount");
        }
        return false;
    }
}
