package dev.ferry.cache;

import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Map;

/**
 * Whether a resident block's bytes may leave the cache as they are on disk, and the check (the block read back
 * whole against its CRC32C) that makes them trusted again. Every path by which cached bytes leave asks it
 * first: {@link ResidentBlocks#source} for readers of a {@link BlockStream} (the loader, the daemon's streamed
 * replies, the mount's reads through the store) and {@link ResidentBlocks#regions} (the daemon's sendfile
 * replies, the mount's reads straight from block files). What it answers depends on {@link VerifyMode}.
 *
 * <p>The rule: a check (the block read back whole against its CRC32C) is remembered as a {@link Witness} of the
 * file (its ctime, inode and size, taken before the bytes are read), and {@link VerifyMode#ON_LOAD} (the default)
 * trusts a block's bytes without reading them only while they provably are the bytes it checked: the file unchanged
 * since the witness, and the pages a use sends still in the page cache since the check (mincore); anything else
 * checks the whole block again. A file system whose ctime is coarse trusts a witness only once it has settled
 * ({@link #SETTLE_NANOS}; {@link #probeCtime} finds which kind it has); a block a run has just written is trusted as
 * fetched by its own reader ({@link #trustedAsFetched}). Why, what it costs and the windows that remain:
 * docs/architecture.md, "Checks of resident blocks".
 *
 * <p>Thread-safe: the only state is the witness each {@link BlockEntry} holds (volatile); {@link #written} sets
 * the first before the block is readable, whichever check finishes last sets it after, and a witness older than
 * the file costs one more check, never a wrong trust.
 */
final class BlockCheck {
    /** How much older than the stat a witnessed ctime must be before the witness is trusted. */
    static final long SETTLE_NANOS = 50_000_000L;
    /** The same, on a file system that keeps whole seconds. */
    static final long SETTLE_NANOS_COARSE = 2_000_000_000L;
    private static final int CHUNK = 256 * 1024;

    /**
     * What a check saw of a block's file just before it read the bytes: the same file, unchanged, shows the same.
     * {@code settled}: its ctime was old enough when seen (see the class comment); only then is it trusted.
     */
    record Witness(Object fileKey, long size, FileTime ctime, boolean settled) {
        boolean sameFileAs(Witness now) {
            return fileKey != null && fileKey.equals(now.fileKey) && size == now.size && ctime.equals(now.ctime);
        }
    }

    private final VerifyMode mode;
    private final CacheCounters counters;
    private final Clock clock;
    private volatile boolean changesShowAfterStat; // see probeCtime

    BlockCheck(VerifyMode mode, CacheCounters counters, Clock clock) {
        this.mode = mode;
        this.counters = counters;
        this.clock = clock;
    }

    VerifyMode mode() {
        return mode;
    }

    /**
     * Finds whether the file system holding {@code dir} (a folder of the cache's own) gives a file a new ctime at
     * every change that follows a stat of it, and trusts witnesses without waiting from here on when it does. A
     * file is written, stat'd and written again, three times over: with a coarse clock, two writes microseconds
     * apart share a tick, and one pair keeping its ctime says no; so does any failure. Returns what it found.
     */
    boolean probeCtime(Path dir) {
        changesShowAfterStat = changesShowAfterStat(dir);
        return changesShowAfterStat;
    }

    /** The probe of {@link #probeCtime}, on its own: true when every write after a stat changed the ctime. */
    static boolean changesShowAfterStat(Path dir) {
        Path probe = dir.resolve("ctime-probe-" + ProcessHandle.current().pid());
        try (FileChannel ch = FileChannel.open(probe, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            for (int i = 0; i < 3; i++) {
                ch.write(one.clear(), 0);
                FileTime before = (FileTime) Files.getAttribute(probe, "unix:ctime");
                ch.write(one.clear(), 0);
                if (before.equals(Files.getAttribute(probe, "unix:ctime"))) {
                    return false;
                }
            }
            return true;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return false;
        } finally {
            try {
                Files.deleteIfExists(probe);
            } catch (IOException ignored) {
                // a stray probe file in the cache's temporary folder: recovery clears it
            }
        }
    }

    /** The file at {@code path} as a stat sees it now. */
    Witness observe(Path path) throws IOException {
        long now = clock.epochMillis();
        Object fileKey;
        long size;
        FileTime changed;
        try {
            Map<String, Object> a = Files.readAttributes(path, "unix:fileKey,size,ctime");
            fileKey = a.get("fileKey");
            size = (Long) a.get("size");
            changed = (FileTime) a.get("ctime");
        } catch (UnsupportedOperationException | IllegalArgumentException noUnixView) {
            BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
            fileKey = a.fileKey();
            size = a.size();
            changed = a.lastModifiedTime(); // no ctime here: the modification time is the best there is
        }
        long changedNanos = changed.to(java.util.concurrent.TimeUnit.NANOSECONDS);
        long settle = changedNanos % 1_000_000_000L == 0 ? SETTLE_NANOS_COARSE : SETTLE_NANOS;
        boolean settled = changesShowAfterStat || changedNanos < now * 1_000_000L - settle;
        return new Witness(fileKey, size, changed, settled);
    }

    /**
     * True when the bytes {@code [from, from + length)} of the data of {@code e} (pinned, open as {@code file};
     * only {@link VerifyMode#ON_LOAD} looks at the file, the other modes take null) may be used as they are on
     * disk now, without a check.
     */
    boolean trusted(BlockEntry e, OpenFiles.Handle file, long from, long length) {
        return switch (mode) {
            case NEVER -> !e.recoveredAfterCrash || e.verified;
            case FIRST_READ -> e.verified;
            case ALWAYS -> false;
            case ON_LOAD -> unchanged(e, file, e.headerLength + from, length, true);
        };
    }

    /**
     * {@link #trusted}, for the reader of the run that fetched {@code e}, come to it after the run let it go. Under
     * {@link VerifyMode#ON_LOAD} its bytes are those fetched (or last checked) while the file is the one written (or
     * checked), unchanged, and the pages to read never left the page cache, however recent the write: a reader of
     * the fetch under way would not see a write in the same clock tick either.
     */
    boolean trustedAsFetched(BlockEntry e, OpenFiles.Handle file, long from, long length) {
        return mode == VerifyMode.ON_LOAD ? unchanged(e, file, e.headerLength + from, length, false) : trusted(e, file, from, length);
    }

    /**
     * Remembers the file a run has just written for {@code e}, for {@link #trustedAsFetched}, and for every other
     * use where ctime shows each change after a stat ({@link #probeCtime}). Elsewhere never settled: any other use
     * checks the block first, as with no witness.
     */
    void written(BlockEntry e) {
        if (mode != VerifyMode.ON_LOAD) {
            return;
        }
        try {
            Witness w = observe(e.path);
            e.witness = new Witness(w.fileKey(), w.size(), w.ctime(), changesShowAfterStat);
        } catch (IOException gone) {
            // no witness: its reader checks it
        }
    }

    private boolean unchanged(BlockEntry e, OpenFiles.Handle file, long position, long length, boolean settledOnly) {
        Witness w = e.witness;
        if (w == null || (settledOnly && !w.settled()) || file.fileKey == null || !file.fileKey.equals(w.fileKey())) {
            return false;
        }
        Witness now;
        try {
            now = observe(e.path);
        } catch (IOException gone) {
            return false;
        }
        return w.sameFileAs(now) && file.resident(position, length);
    }

    /**
     * Reads {@code e} whole from the file now at its name, checks its header against the entry and its data
     * against its CRC32C, and returns the data; on success the block is trusted from here on as the class
     * comment says. Throws {@link BlockFile.CorruptBlockException} (or another IOException) when it fails: the
     * caller drops the block.
     */
    byte[] readChecked(BlockEntry e) throws IOException {
        Witness before = observe(e.path);
        try (FileChannel ch = FileChannel.open(e.path, StandardOpenOption.READ)) {
            BlockFile.Header h = header(ch, e);
            byte[] data = BlockFile.readVerified(ch, h, e.path);
            passed(e, before);
            return data;
        }
    }

    /** {@link #readChecked}, keeping none of the data: for a use that then sends the file's pages. */
    void check(BlockEntry e) throws IOException {
        Witness before = observe(e.path);
        try (FileChannel ch = FileChannel.open(e.path, StandardOpenOption.READ)) {
            BlockFile.checkData(ch, header(ch, e), e.path, CHUNK);
            passed(e, before);
        }
    }

    /**
     * {@link #check} through {@code file}, open on the block's name, for a use that then reads that file: the
     * bytes checked are the ones it reads. The check is remembered only when the name still holds that file (a
     * file put over the name since was not read).
     */
    void check(BlockEntry e, OpenFiles.Handle file) throws IOException {
        Witness before = observe(e.path);
        BlockFile.checkData(file.channel, header(file.channel, e), e.path, CHUNK);
        if (file.fileKey != null && file.fileKey.equals(before.fileKey())) {
            passed(e, before);
        } else {
            counters.verifiedBlocks.increment();
        }
    }

    private static BlockFile.Header header(FileChannel ch, BlockEntry e) throws IOException {
        BlockFile.Header h = BlockFile.readHeader(ch, e.path);
        if (!h.id().equals(e.id)) {
            throw new BlockFile.CorruptBlockException(e.path + ": holds " + h.id() + ", not " + e.id);
        }
        if (h.dataLength() != e.dataLength || h.headerLength() != e.headerLength || h.dataCrc() != e.crc) {
            throw new BlockFile.CorruptBlockException(e.path + ": header does not match the index (length, layout or CRC32C)");
        }
        return h;
    }

    private void passed(BlockEntry e, Witness before) {
        counters.verifiedBlocks.increment();
        e.verified = true;
        e.witness = before;
    }
}
