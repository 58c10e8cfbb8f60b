package dev.ferry.cache;

import dev.ferry.store.ObjectKey;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the local tier finds on disk when it opens, and what it leaves at a clean close (after Kafka's
 * {@code RemoteIndexCache} and {@code CleanShutdownFileHandler}): temporaries are deleted; the index comes from
 * the snapshot written at clean close (the clean-shutdown marker, removed as it is read) or, after a crash,
 * from the headers of the block files ({@link BlockFile}), read in parallel, and the blocks found that way are
 * marked for a check on their first read.
 *
 * <pre>
 * snapshot: magic "FRYI" (4) | count (4) | count x (bucket, key, etag (modified UTF-8) | index (8)
 *           | object size (8) | data length (4) | header length (4) | data CRC32C (4)) | CRC32C of all before (4)
 * </pre>
 *
 * <p>Thread-safety: stateless between calls; the cache calls it while it holds its directory lock, on open and at
 * close, never concurrently with itself.
 */
final class CacheRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(CacheRecovery.class);
    private static final int SNAPSHOT_MAGIC = 0x46525949; // "FRYI"
    private static final int SCAN_THREADS = 16;

    private final CacheLayout layout;
    private final Path blocksDir;
    private final Path tmpDir;

    CacheRecovery(CacheLayout layout) {
        this.layout = layout;
        this.blocksDir = layout.blocks();
        this.tmpDir = layout.tmp();
    }

    /**
     * Deletes leftover temporaries and returns the blocks on disk: the snapshot's when there is a sound one, else
     * those whose headers pass (a scan; each file that fails is deleted and counted with {@code onDropped}).
     */
    List<BlockEntry> recover(Runnable onDropped) throws IOException {
        try (Stream<Path> temps = Files.list(tmpDir)) {
            for (Path t : temps.toList()) {
                Files.deleteIfExists(t);
            }
        }
        List<BlockEntry> recovered = readSnapshot();
        return recovered != null ? recovered : scan(onDropped);
    }

    /** The index from a clean close, or null; the snapshot is removed, so a crash from here on means a scan. */
    private List<BlockEntry> readSnapshot() {
        Path snapshot = layout.snapshot();
        if (!Files.exists(snapshot)) {
            return null;
        }
        CRC32C crc = new CRC32C();
        try (DataInputStream in = new DataInputStream(new CheckedInputStream(
                new BufferedInputStream(Files.newInputStream(snapshot), 1 << 16), crc))) {
            if (in.readInt() != SNAPSHOT_MAGIC) {
                throw new IOException("not a ferry index snapshot");
            }
            int count = in.readInt();
            List<BlockEntry> entries = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                BlockId id = new BlockId(ObjectKey.of(in.readUTF(), in.readUTF()), in.readUTF(), in.readLong());
                long objectSize = in.readLong();
                int dataLength = in.readInt();
                int headerLength = in.readInt();
                int dataCrc = in.readInt();
                entries.add(new BlockEntry(id, BlockFile.pathFor(blocksDir, id), objectSize, dataLength, headerLength, dataCrc, false));
            }
            int computed = (int) crc.getValue();
            int stored = in.readInt();
            if (computed != stored) {
                throw new IOException("checksum mismatch");
            }
            return entries;
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("index snapshot {} is damaged ({}); rebuilding the index from the block files", snapshot, e.getMessage());
            return null;
        } finally {
            try {
                Files.deleteIfExists(snapshot);
            } catch (IOException e) {
                LOG.warn("cannot remove {}: {}", snapshot, e.getMessage());
            }
        }
    }

    /**
     * Rebuilds the index from block headers after a crash; files that fail are deleted. Headers are read by
     * {@link #SCAN_THREADS} threads: on a cold disk the scan waits on I/O, and NVMe serves many reads at once.
     */
    private List<BlockEntry> scan(Runnable onDropped) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(blocksDir)) {
            files = walk.filter(p -> p.getFileName().toString().endsWith(".blk")).toList();
        }
        List<BlockEntry> entries = Collections.synchronizedList(new ArrayList<>(files.size()));
        ExecutorService pool = Executors.newFixedThreadPool(SCAN_THREADS, r -> {
            Thread t = new Thread(r, "ferry-cache-scan");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> work = new ArrayList<>();
            int chunk = Math.max(1, files.size() / (SCAN_THREADS * 4));
            for (int from = 0; from < files.size(); from += chunk) {
                List<Path> slice = files.subList(from, Math.min(files.size(), from + chunk));
                work.add(pool.submit(() -> {
                    for (Path file : slice) {
                        BlockEntry e = readEntry(file, onDropped);
                        if (e != null) {
                            entries.add(e);
                        }
                    }
                }));
            }
            for (Future<?> f : work) {
                f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while scanning the cache");
        } catch (ExecutionException e) {
            throw new IOException("cannot scan the cache: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }
        if (!files.isEmpty()) {
            LOG.info("recovered {} cached blocks after an unclean shutdown; each is checked on its first read", entries.size());
        }
        return new ArrayList<>(entries);
    }

    private BlockEntry readEntry(Path file, Runnable onDropped) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            BlockFile.Header h = BlockFile.readHeader(ch, file);
            if (!BlockFile.pathFor(blocksDir, h.id()).equals(file)) {
                throw new BlockFile.CorruptBlockException(file + ": stored under the wrong name");
            }
            return new BlockEntry(h.id(), file, h.objectSize(), h.dataLength(), h.headerLength(), h.dataCrc(), true);
        } catch (IOException e) {
            LOG.warn("dropping cached block {}: {}", file, e.getMessage());
            onDropped.run();
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // it will fail its check again next time
            }
            return null;
        }
    }

    /**
     * Writes the snapshot of {@code entries} (ready blocks, every one already fsync'd): to a temporary, fsync'd,
     * then renamed into place, so a snapshot under its name is whole.
     */
    void writeSnapshot(List<BlockEntry> entries) throws IOException {
        Path temp = tmpDir.resolve(CacheLayout.SNAPSHOT + ".tmp");
        CRC32C crc = new CRC32C();
        try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new CheckedOutputStream(
                    Channels.newOutputStream(ch), crc), 1 << 16));
            out.writeInt(SNAPSHOT_MAGIC);
            out.writeInt(entries.size());
            for (BlockEntry e : entries) {
                out.writeUTF(e.id.key().bucket());
                out.writeUTF(e.id.key().key());
                out.writeUTF(e.id.etag());
                out.writeLong(e.id.index());
                out.writeLong(e.objectSize);
                out.writeInt(e.dataLength);
                out.writeInt(e.headerLength);
                out.writeInt(e.crc);
            }
            out.flush();
            int sum = (int) crc.getValue();
            ch.write(ByteBuffer.allocate(4).putInt(0, sum));
            ch.force(true);
        }
        Files.move(temp, layout.snapshot(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
