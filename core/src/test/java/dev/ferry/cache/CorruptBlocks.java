package dev.ferry.cache;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Damages a cache directory's block files the way issue 20's probe did: 16 bytes flipped in each block file
 * (written through the file system, in the data, past the header), then the page cache dropped when this
 * process may ({@code echo 3 > /proc/sys/vm/drop_caches} as root), so the next reads come from the device.
 * Shared with the daemon's and the mount's tests.
 */
public final class CorruptBlocks {
    private CorruptBlocks() {
    }

    /** The block files under {@code cacheDir}. */
    public static List<Path> blockFiles(Path cacheDir) throws IOException {
        try (Stream<Path> files = Files.walk(cacheDir.resolve(CacheLayout.BLOCKS))) {
            return files.filter(p -> p.toString().endsWith(".blk")).sorted().toList();
        }
    }

    /** Flips 16 bytes in the middle of each block file under {@code cacheDir}; the number of files damaged. */
    public static int flip16InEach(Path cacheDir) throws IOException {
        List<Path> files = blockFiles(cacheDir);
        for (Path f : files) {
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                long at = ch.size() - ch.size() / 2 - 8; // the data's middle: headers are a few hundred bytes
                ByteBuffer b = ByteBuffer.allocate(16);
                ch.read(b, at);
                for (int i = 0; i < 16; i++) {
                    b.put(i, (byte) ~b.get(i));
                }
                b.rewind();
                ch.write(b, at);
            }
        }
        return files.size();
    }

    /**
     * {@code sync; echo 3 > /proc/sys/vm/drop_caches}: true when it worked (root, a writable /proc), false
     * otherwise (the tests that call it pass either way; dropping only makes the next read come from the device).
     */
    public static boolean dropPageCache() {
        Path knob = Path.of("/proc/sys/vm/drop_caches");
        if (!Files.isWritable(knob)) {
            return false;
        }
        try {
            Process p = new ProcessBuilder("sh", "-c", "sync && echo 3 > /proc/sys/vm/drop_caches").redirectErrorStream(true).start();
            p.getOutputStream().close();
            p.getInputStream().readAllBytes();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * The checks a cache in a folder of {@code dir}'s file system makes of {@code blocks} blocks it has just fetched,
     * at their first use by another reader: none where the file system gives every change after a stat a new ctime
     * ({@link BlockCheck#probeCtime}: those blocks are trusted as fetched), else one each.
     */
    public static long checksOfBlocksJustFetched(Path dir, long blocks) {
        return BlockCheck.changesShowAfterStat(dir) ? 0 : blocks;
    }

    /** Waits until a block written now is past {@link BlockCheck}'s settling time, so a check of it is remembered. */
    public static void waitToSettle() throws InterruptedException {
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(BlockCheck.SETTLE_NANOS) * 2 + 20);
    }
}
