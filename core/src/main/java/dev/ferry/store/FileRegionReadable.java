package dev.ferry.store;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An optional ability of an object's stream ({@link ObjectContent#stream()}): its next bytes handed over as a
 * region of a local file instead of copied into the caller's array, so a server can send them file-to-socket
 * ({@code sendfile}) and hold nothing in memory for a client that reads slowly. A stream that has it may
 * still answer some of its bytes with {@link java.io.InputStream#read}: {@link #nextRegion} says which.
 */
public interface FileRegionReadable {
    /**
     * The stream's next bytes as a region of a file, at most {@code maxBytes}, waiting until some are there;
     * the stream moves past them. Null when the next bytes are not in a file (read them with
     * {@link java.io.InputStream#read(byte[], int, int)}) or at the end of the stream.
     */
    Region nextRegion(int maxBytes) throws IOException;

    /**
     * {@code length} bytes at {@code position} of {@code channel}, readable until {@link #release()}. The channel
     * is shared: read it only with positional reads or {@code transferTo}, never close it; release the region
     * exactly once, sent or not.
     *
     * <p>Thread-safe: {@link #release()} acts once.
     */
    final class Region {
        private final FileChannel channel;
        private final long position;
        private final long length;
        private final AtomicReference<Runnable> release;

        public Region(FileChannel channel, long position, long length, Runnable release) {
            this.channel = Objects.requireNonNull(channel, "channel is null");
            this.release = new AtomicReference<>(Objects.requireNonNull(release, "release is null"));
            if (position < 0 || length <= 0) {
                throw new IllegalArgumentException("position must be >= 0 and length > 0: " + position + ", " + length);
            }
            this.position = position;
            this.length = length;
        }

        public FileChannel channel() {
            return channel;
        }

        public long position() {
            return position;
        }

        public long length() {
            return length;
        }

        /** Lets the file go; only the first call does anything. */
        public void release() {
            Runnable r = release.getAndSet(null);
            if (r != null) {
                r.run();
            }
        }
    }
}
