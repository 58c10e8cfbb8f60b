package dev.ferry.cache;

import dev.ferry.store.FileRegionReadable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A read whose every block was on local disk when it was opened, as the regions of their files in order: a server
 * sends them file-to-socket ({@link #nextRegion}), never waiting, or a reader copies them ({@link #read}). Each region
 * holds its block file open (eviction deletes the name, not the bytes) until it is released; a region handed out in
 * parts is let go when every part is. {@link #close} lets go of those not handed out. Not thread-safe: one reader
 * (the regions it hands out may be released on any thread).
 */
final class ResidentStream extends InputStream implements FileRegionReadable {
    private final Deque<Region> regions;

    ResidentStream(List<Region> regions) {
        this.regions = new ArrayDeque<>(regions);
    }

    /** The next region, at most {@code maxBytes} of it; never waits (every block is on disk). Null at the end. */
    @Override
    public Region nextRegion(int maxBytes) {
        Region r = regions.peekFirst();
        if (r == null || maxBytes <= 0) {
            return null;
        }
        if (r.length() <= maxBytes) {
            return regions.pollFirst();
        }
        // the first maxBytes of it now, the rest stays: the file is let go when both are released
        regions.pollFirst();
        AtomicInteger holders = new AtomicInteger(2);
        Runnable release = () -> {
            if (holders.decrementAndGet() == 0) {
                r.release();
            }
        };
        regions.addFirst(new Region(r.channel(), r.position() + maxBytes, r.length() - maxBytes, release));
        return new Region(r.channel(), r.position(), maxBytes, release);
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        Region r = nextRegion(len);
        if (r == null) {
            return -1;
        }
        try {
            ByteBuffer buf = ByteBuffer.wrap(b, off, (int) r.length());
            FileChannel ch = r.channel();
            long at = r.position();
            while (buf.hasRemaining()) {
                int n = ch.read(buf, at);
                if (n < 0) {
                    throw new BlockFile.CorruptBlockException("a cached block ends early");
                }
                at += n;
            }
            return (int) r.length();
        } finally {
            r.release();
        }
    }

    @Override
    public void close() {
        for (Region r; (r = regions.pollFirst()) != null; ) {
            r.release();
        }
    }
}
