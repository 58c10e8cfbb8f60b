package dev.ferry.cache;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Checks every block of a cache directory that no cache has open: header, name, length and data CRC32C.
 * Bad blocks are deleted (the cache fetches them again when needed), and so is the index snapshot when
 * anything was removed, so the next open rebuilds the index from what is left.
 */
public final class CacheVerifier {
    private CacheVerifier() {
    }

    /** What a verification found. */
    public record Report(long blocks, long bytes, List<String> problems, long temporariesRemoved) {
        public boolean clean() {
            return problems.isEmpty();
        }
    }

    public static Report verify(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IOException("no cache directory at " + dir);
        }
        CacheLayout layout = new CacheLayout(dir);
        if (!Files.isDirectory(layout.blocks())) {
            throw new IOException(dir + " is not a ferry cache directory (no " + CacheLayout.BLOCKS + "/ folder)");
        }
        try (FileChannel lockChannel = FileChannel.open(layout.lock(), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            FileLock lock;
            try {
                lock = lockChannel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                throw new IOException("cache directory " + dir + " is in use by a running ferry; stop it first");
            }
            try {
                return verifyLocked(layout);
            } finally {
                lock.release();
            }
        }
    }

    private static Report verifyLocked(CacheLayout layout) throws IOException {
        long temporaries = 0;
        Path blocksDir = layout.blocks();
        Path tmp = layout.tmp();
        if (Files.isDirectory(tmp)) {
            try (Stream<Path> temps = Files.list(tmp)) {
                for (Path t : temps.toList()) {
                    Files.deleteIfExists(t);
                    temporaries++;
                }
            }
        }
        List<Path> files;
        try (Stream<Path> walk = Files.walk(blocksDir)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        List<String> problems = new ArrayList<>();
        long blocks = 0;
        long bytes = 0;
        for (Path file : files) {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                if (!file.getFileName().toString().endsWith(".blk")) {
                    throw new BlockFile.CorruptBlockException(file + ": not a block file name");
                }
                BlockFile.Header h = BlockFile.readHeader(ch, file);
                if (!BlockFile.pathFor(blocksDir, h.id()).equals(file)) {
                    throw new BlockFile.CorruptBlockException(file + ": stored under the wrong name");
                }
                BlockFile.readVerified(ch, h, file);
                blocks++;
                bytes += h.dataLength();
            } catch (IOException e) {
                problems.add(e.getMessage());
                Files.deleteIfExists(file);
            }
        }
        if (!problems.isEmpty()) {
            Files.deleteIfExists(layout.snapshot());
        }
        return new Report(blocks, bytes, List.copyOf(problems), temporaries);
    }
}
