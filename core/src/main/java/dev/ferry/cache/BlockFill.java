package dev.ferry.cache;

import dev.ferry.store.FileRegionReadable;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * One block being fetched from upstream, shared by every reader of it. Its bytes go to the block's temporary
 * file as they arrive, and every reader reads them there, each at its own pace, as soon as they are written
 * (stream-through: a reader gets bytes before the block is complete).
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>One fetcher, never paced by a reader.</b> The fill's fetcher (its run's fetch task, or a prefetcher)
 *       pulls from upstream ({@link #pullFrom}) as fast as upstream and the disk go, and writes each pull to
 *       the file before readers are told of it; readers wait in {@link #read} or {@link #region} for the bytes
 *       they need. A reader that stops reading holds back neither the fetch nor the other readers, and holds
 *       no bytes: they wait in the file (the page cache), not in memory. The fetcher's memory is one slice, not
 *       the block.
 *   <li><b>Read through one shared channel</b> ({@link SharedChannel}) opened on the temporary file when the
 *       block starts: it keeps reading the bytes after the file is renamed into place, evicted or discarded.
 *       The fill holds it while it is being fetched or has readers {@linkplain #attach attached}, and each
 *       region handed out holds it until sent. Once the fill is finished and no reader is attached, its hold is
 *       released, and a reader coming later finds the block on disk instead ({@link #attach} says so).
 *   <li><b>Read from the fill only while it is fetched.</b> Once the block is in place under its name, a reader
 *       still attached reads the rest of it there too ({@link InPlace}), as a resident block's, checked first as
 *       {@link BlockCheck} says: a reader that stalled past the fetch reads bytes back from disk, not as fetched.
 *   <li><b>In memory only when the disk refuses.</b> When no temporary file could be made or a write failed,
 *       the disk's failure is reported and the block's bytes are kept in one array (what was already written is
 *       read back); the block is then not kept, and its run stops after it ({@link BlockFetcher.Run}).
 *   <li><b>Never served after a failure.</b> A block reaches its final name only when all of its bytes arrived
 *       (the run commits the file after {@link #isComplete}); a failed or abandoned fill deletes its temporary
 *       file, and its readers see the failure ({@link #fail}) or start again ({@link #abandon}).
 *   <li><b>No fsync</b> on the way: see {@link BlockCache}'s note on durability.
 * </ul>
 *
 * <p>Thread-safe: the fetcher's methods ({@link #start}, {@link #pullFrom}, {@link #crc}, {@link #file}) are for
 * the one fetching thread; the state readers see is guarded by this object's monitor.
 */
final class BlockFill {
    /** The fetcher's buffer: the most one read from upstream brings in, and what a region waits for. */
    static final int SLICE = 256 * 1024;

    /** The fill stopped because its run stopped before it: readers fetch for themselves. */
    static final class Abandoned extends IOException {
        private static final long serialVersionUID = 1L;

        Abandoned() {
            super("the fetch of this block stopped early");
        }
    }

    /** The block is in place under its name: the reader reads the rest of it there, as a resident block's. */
    static final class InPlace extends IOException {
        private static final long serialVersionUID = 1L;

        InPlace() {
            super("the fetch of this block finished and put it in place");
        }
    }

    final BlockId id;
    private final int length;
    private int filled; // guarded by this
    private IOException failure; // guarded by this
    private boolean finished; // guarded by this: complete, failed or abandoned
    private boolean inPlace; // guarded by this: complete, and the block in place under its name
    private int readers; // guarded by this
    private SharedChannel channel; // guarded by this: the file's, for readers; null until started, or in memory
    private int headerLength; // guarded by this
    private boolean released; // guarded by this: the fill's hold on the channel is given up
    private byte[] memory; // guarded by this: the bytes, when the disk refused them

    // the fetcher's, unguarded
    private final CRC32C crc = new CRC32C();
    private BlockFile.Pending file;
    private int fetched;

    BlockFill(BlockId id, int length) {
        this.id = id;
        this.length = length;
    }

    int length() {
        return length;
    }

    synchronized int filled() {
        return filled;
    }

    /** True once the fetcher has all of the block's bytes (readers get the last of them at {@link #finish}). */
    boolean isComplete() {
        return fetched == length;
    }

    // ---- the fetcher ----------------------------------------------------------------------------------

    /**
     * Starts the block: its bytes go to {@code pending} and are read back from there; into memory when
     * {@code pending} is null or cannot be read ({@code onWriteFailure} is told then).
     */
    void start(BlockFile.Pending pending, WriteFailure onWriteFailure) {
        SharedChannel ch = null;
        if (pending != null) {
            try {
                ch = SharedChannel.open(pending.path());
            } catch (IOException e) {
                pending.discard();
                pending = null;
                onWriteFailure.failed(e);
            }
        }
        file = pending;
        synchronized (this) {
            if (ch != null) {
                channel = ch;
                headerLength = pending.headerLength();
            } else {
                memory = new byte[length];
            }
        }
    }

    /** The temporary file the bytes go to; null when the block is not kept (or the disk refused). */
    BlockFile.Pending file() {
        return file;
    }

    /**
     * Reads once from {@code in} (at most {@code slice.length}) through {@code slice}, writes the bytes to the
     * file and hands them to readers. A write that fails stops the keeping, not the read: the bytes go to
     * memory from then on, the file is discarded and {@code onWriteFailure} told. Returns the bytes read; -1 at
     * the end of the stream.
     */
    int pullFrom(InputStream in, byte[] slice, WriteFailure onWriteFailure) throws IOException {
        int at = fetched;
        int n = in.read(slice, 0, Math.min(slice.length, length - at));
        if (n <= 0) {
            return n == 0 ? 0 : -1;
        }
        crc.update(slice, 0, n);
        if (file != null) {
            try {
                file.write(slice, 0, n, at);
            } catch (IOException e) {
                toMemory(at, e, onWriteFailure);
            }
        }
        if (file == null) {
            byte[] m;
            synchronized (this) {
                m = memory;
            }
            System.arraycopy(slice, 0, m, at, n); // past what readers may read: they read [0, filled)
        }
        fetched = at + n;
        if (fetched < length) { // the last bytes wait for finish(): a reader at the end finds the block counted and in place
            synchronized (this) {
                filled = fetched;
                notifyAll();
            }
        }
        return n;
    }

    /** The disk refused a write: the {@code written} bytes already in the file are read back, the rest goes to memory. */
    private void toMemory(int written, IOException cause, WriteFailure onWriteFailure) throws IOException {
        file.discard();
        file = null;
        onWriteFailure.failed(cause);
        SharedChannel ch;
        int header;
        synchronized (this) {
            ch = channel;
            header = headerLength;
        }
        byte[] m = new byte[length];
        ByteBuffer buf = ByteBuffer.wrap(m, 0, written);
        while (buf.hasRemaining()) {
            if (ch.channel.read(buf, header + (long) buf.position()) < 0) {
                throw new IOException("cannot read back block " + id.index() + " of " + id.key() + " after a failed write", cause);
            }
        }
        synchronized (this) {
            memory = m;
        }
    }

    /** The CRC32C of the whole block; only once it is complete. */
    int crc() {
        if (!isComplete()) {
            throw new IllegalStateException("block " + id + " is not complete");
        }
        return (int) crc.getValue();
    }

    /**
     * The fetcher is done with the complete block (counted, and {@code inPlace} when published): readers get its
     * last bytes, and the file is let go once no reader is attached.
     */
    void finish(boolean inPlace) {
        if (!isComplete()) {
            throw new IllegalStateException("block " + id + " is not complete");
        }
        SharedChannel release;
        synchronized (this) {
            filled = length;
            finished = true;
            this.inPlace = inPlace;
            notifyAll();
            release = releasableLocked();
        }
        if (release != null) {
            release.release();
        }
    }

    /** The fetch failed: readers see {@code e} for the bytes that did not come; the temporary file is deleted. */
    void fail(IOException e) {
        if (file != null) {
            file.discard();
            file = null;
        }
        SharedChannel release;
        synchronized (this) {
            if (failure == null && filled < length) {
                failure = e;
            }
            finished = true;
            notifyAll();
            release = releasableLocked();
        }
        if (release != null) {
            release.release();
        }
    }

    /** The fetch stopped before the block was complete: readers start again. */
    void abandon() {
        fail(new Abandoned());
    }

    private SharedChannel releasableLocked() {
        if (finished && readers == 0 && channel != null && !released) {
            released = true;
            return channel;
        }
        return null;
    }

    // ---- readers --------------------------------------------------------------------------------------

    /**
     * Attaches a reader: the fill's bytes stay readable until it {@linkplain #detach detaches}. False when the
     * fill finished and let its file go: the block is on disk now, or must be fetched again.
     */
    synchronized boolean attach() {
        if (released && memory == null) {
            return false;
        }
        readers++;
        return true;
    }

    /** The failure that ended the fetch, when it failed (not when it was abandoned); null otherwise. */
    synchronized IOException failure() {
        return failure instanceof Abandoned ? null : failure;
    }

    void detach() {
        SharedChannel release;
        synchronized (this) {
            if (readers == 0) {
                throw new IllegalStateException("detached more often than attached");
            }
            readers--;
            release = releasableLocked();
        }
        if (release != null) {
            release.release();
        }
    }

    /**
     * Copies up to {@code len} bytes from {@code offsetInBlock}, waiting until at least one is there. Throws the
     * fill's failure ({@link Abandoned} when its fetch stopped early), or {@link InPlace} once the block is in
     * place. The reader must be attached.
     */
    int read(byte[] b, int off, int len, int offsetInBlock) throws IOException {
        int n = Math.min(len, awaitBytes(offsetInBlock, 1) - offsetInBlock);
        SharedChannel ch;
        int header;
        byte[] m;
        synchronized (this) {
            ch = channel;
            header = headerLength;
            m = memory;
        }
        if (m != null) {
            System.arraycopy(m, offsetInBlock, b, off, n);
            return n;
        }
        ByteBuffer buf = ByteBuffer.wrap(b, off, n);
        while (buf.hasRemaining()) {
            if (ch.channel.read(buf, header + (long) offsetInBlock + (buf.position() - off)) < 0) {
                throw new IOException("the temporary file of block " + id.index() + " of " + id.key() + " ends early");
            }
        }
        return n;
    }

    /**
     * Up to {@code maxBytes} from {@code offsetInBlock} as a region of the block's file, waiting until a slice
     * of them (or the rest of the block) is there; null when the bytes are in memory (read them instead). Throws
     * like {@link #read}. The reader must be attached.
     */
    FileRegionReadable.Region region(int offsetInBlock, int maxBytes) throws IOException {
        int available = awaitBytes(offsetInBlock, Math.min(SLICE, maxBytes));
        SharedChannel ch;
        int header;
        synchronized (this) {
            if (memory != null) {
                return null;
            }
            ch = channel;
            header = headerLength;
        }
        if (!ch.retain()) {
            throw new IllegalStateException("block " + id.index() + " of " + id.key() + " was let go while a reader was attached");
        }
        return new FileRegionReadable.Region(ch.channel, header + (long) offsetInBlock,
                Math.min(maxBytes, available - offsetInBlock), ch::release);
    }

    /**
     * Waits until {@code atLeast} bytes from {@code offset} are there (fewer at the end of the block), or the fill
     * finished; returns the bytes filled. Throws the failure when not even one byte at {@code offset} came.
     */
    private synchronized int awaitBytes(int offset, int atLeast) throws IOException {
        if (inPlace) {
            throw new InPlace();
        }
        int want = Math.min(length, offset + Math.max(1, atLeast));
        while (filled < want && !finished) {
            try {
                wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for block " + id.index() + " of " + id.key());
            }
        }
        if (filled <= offset) {
            if (failure == null) {
                throw new IllegalStateException("block " + id.index() + " of " + id.key() + " finished without its bytes");
            }
            throw failure instanceof Abandoned ? new Abandoned() : failure;
        }
        return filled;
    }

    /** What a fill tells its owner when the disk refused its bytes. */
    @FunctionalInterface
    interface WriteFailure {
        void failed(IOException e);
    }
}
