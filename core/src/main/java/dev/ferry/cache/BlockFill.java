package dev.ferry.cache;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.zip.CRC32C;

/**
 * One block being fetched from upstream, shared by every reader of it: the bytes land in one buffer as they
 * arrive, readers are handed them as soon as they are there (stream-through), and, when the block is to be
 * kept, they are written to its temporary file on the way (in slices of {@link #WRITE_SLICE}).
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>One driver.</b> The reader that claimed the block (or a prefetcher) pulls from the upstream stream
 *       ({@link #pullFrom}); everyone else waits in {@link #read} for the bytes it needs, so single flight
 *       holds while the block is still arriving.
 *   <li><b>Never served after a failure.</b> A block reaches its final name only when all of its bytes
 *       arrived (the caller commits the file after {@link #isComplete}); a failed or abandoned fill deletes
 *       its temporary file, and its waiters see the failure ({@link #fail}) or start again ({@link #abandon}).
 *   <li><b>No fsync</b> on the way: see {@link CachingStore}'s note on durability.
 * </ul>
 *
 * <p>Thread-safe: the driver's methods are for the one driving thread; {@link #read} and the state are
 * guarded by this object's monitor.
 */
final class BlockFill {
    /** Bytes gathered before they are written to the file: few large writes, not one per socket read. */
    static final int WRITE_SLICE = 256 * 1024;
    private static final int READ_SLICE = 256 * 1024;

    /** The fill stopped because its driver left early: waiters fetch for themselves. */
    static final class Abandoned extends IOException {
        private static final long serialVersionUID = 1L;

        Abandoned() {
            super("the reader fetching this block stopped early");
        }
    }

    final BlockId id;
    private final byte[] data;
    private int filled; // guarded by this
    private IOException failure; // guarded by this

    // the driver's, unguarded
    private final CRC32C crc = new CRC32C();
    private BlockFile.Pending file;
    private int written;

    BlockFill(BlockId id, int length) {
        this.id = id;
        this.data = new byte[length];
    }

    int length() {
        return data.length;
    }

    synchronized int filled() {
        return filled;
    }

    synchronized boolean isComplete() {
        return filled == data.length;
    }

    // ---- the driver -----------------------------------------------------------------------------------

    /** Keeps the bytes in {@code pending} as they arrive (the driver calls this before the first pull). */
    void keepIn(BlockFile.Pending pending) {
        this.file = pending;
    }

    /** The temporary file the bytes go to; null when the block is not kept (or the disk refused). */
    BlockFile.Pending file() {
        return file;
    }

    /**
     * Reads once from {@code in} (at most {@link #READ_SLICE}) into the block and hands the bytes to waiters;
     * writes them to the file in slices. A write that fails stops the keeping, not the read: the file is
     * discarded and {@code onWriteFailure} told. Returns the bytes read; -1 at the end of the stream.
     */
    int pullFrom(InputStream in, WriteFailure onWriteFailure) throws IOException {
        int at = filled();
        int n = in.read(data, at, Math.min(READ_SLICE, data.length - at));
        if (n <= 0) {
            return n == 0 ? 0 : -1;
        }
        crc.update(data, at, n);
        int now = at + n;
        if (file != null && (now - written >= WRITE_SLICE || now == data.length)) {
            try {
                file.write(data, written, now - written, written);
                written = now;
            } catch (IOException e) {
                file.discard();
                file = null;
                onWriteFailure.failed(e);
            }
        }
        synchronized (this) {
            filled = now;
            notifyAll();
        }
        return n;
    }

    /** The CRC32C of the whole block; only once it is complete. */
    int crc() {
        if (!isComplete()) {
            throw new IllegalStateException("block " + id + " is not complete");
        }
        return (int) crc.getValue();
    }

    /** The block's bytes; only once it is complete (the buffer itself: do not change it). */
    byte[] data() {
        if (!isComplete()) {
            throw new IllegalStateException("block " + id + " is not complete");
        }
        return data;
    }

    /** The fetch failed: waiters see {@code e}; the temporary file is deleted. */
    void fail(IOException e) {
        discardFile();
        synchronized (this) {
            if (failure == null && filled < data.length) {
                failure = e;
            }
            notifyAll();
        }
    }

    /** The driver left before the block was complete: waiters start again. */
    void abandon() {
        fail(new Abandoned());
    }

    private void discardFile() {
        if (file != null) {
            file.discard();
            file = null;
        }
    }

    // ---- readers --------------------------------------------------------------------------------------

    /**
     * Copies up to {@code len} bytes from {@code offsetInBlock}, waiting until at least one is there. Throws
     * the fill's failure ({@link Abandoned} when its driver left early).
     */
    int read(byte[] b, int off, int len, int offsetInBlock) throws IOException {
        int available;
        synchronized (this) {
            while (filled <= offsetInBlock && failure == null) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while waiting for block " + id.index() + " of " + id.key());
                }
            }
            if (filled <= offsetInBlock) {
                throw failure instanceof Abandoned ? new Abandoned() : failure;
            }
            available = filled;
        }
        int n = Math.min(len, available - offsetInBlock);
        System.arraycopy(data, offsetInBlock, b, off, n);
        return n;
    }

    /** What a fill tells its owner when the disk refused its bytes. */
    @FunctionalInterface
    interface WriteFailure {
        void failed(IOException e);
    }
}
