package dev.ferry.mount;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Method;
import org.cryptomator.jfuse.api.FileInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets {@code keep_cache}, {@code direct_io} and {@code noflush} of libfuse3's {@code struct fuse_file_info}, which
 * jfuse 0.7 does not expose: the bit fields follow {@code int flags}, in the 32-bit word at offset 4
 * ({@code writepage} bit 0, {@code direct_io} bit 1, {@code keep_cache} bit 2, {@code noflush} bit 7; libfuse adds
 * new fields after the old ones, so these places hold in every 3.x, and a libfuse older than {@code noflush} (3.11)
 * leaves bit 7 as padding it never reads). {@code noflush} tells the kernel (5.16 and later) that a {@code close()}
 * of this open file needs no FLUSH request: for a file open only for reading the mount has nothing to do at
 * {@code close()}, so the reader does not wait a round trip through the mount for it. When the struct cannot be
 * reached (another jfuse), nothing is set: the kernel then drops a file's cached pages at every open and asks for a
 * flush at every close, which is correct, only slower.
 */
final class FileInfoBits {
    private static final Logger LOG = LoggerFactory.getLogger(FileInfoBits.class);
    private static final int DIRECT_IO = 1 << 1;
    private static final int KEEP_CACHE = 1 << 2;
    private static final int NO_FLUSH = 1 << 7;
    private static volatile Method segment;
    private static volatile boolean unavailable;

    private FileInfoBits() {
    }

    /** A {@link FileInfo} that is not libfuse's (one a test drives the file system with): told the bits instead. */
    interface Told {
        void openBits(boolean keepCache, boolean directIo, boolean noFlush);
    }

    static void set(FileInfo fi, boolean keepCache, boolean directIo, boolean noFlush) {
        if (fi instanceof Told told) {
            told.openBits(keepCache, directIo, noFlush);
            return;
        }
        if (unavailable || (!keepCache && !directIo && !noFlush)) {
            return;
        }
        try {
            Method m = segment;
            if (m == null) {
                m = fi.getClass().getDeclaredMethod("segment");
                m.setAccessible(true);
                segment = m;
            }
            MemorySegment s = (MemorySegment) m.invoke(fi);
            int bits = s.get(ValueLayout.JAVA_INT_UNALIGNED, 4) & ~(DIRECT_IO | KEEP_CACHE | NO_FLUSH);
            bits |= (keepCache ? KEEP_CACHE : 0) | (directIo ? DIRECT_IO : 0) | (noFlush ? NO_FLUSH : 0);
            s.set(ValueLayout.JAVA_INT_UNALIGNED, 4, bits);
        } catch (ReflectiveOperationException | RuntimeException e) {
            unavailable = true;
            LOG.warn("cannot set keep_cache/direct_io/noflush on open files ({}); every open drops the kernel's cached"
                    + " pages and every close waits for a flush", e.toString());
        }
    }
}
