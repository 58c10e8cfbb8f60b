package dev.ferry.cache;

import dev.ferry.store.ObjectKey;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;

/**
 * Fills a local tier's folder with synthetic blocks in the cache's own format ({@link BlockFile}), as if a
 * {@link CachingStore} had cached them and then crashed before writing its snapshot: what {@code ferry bench
 * restart} opens. It lives here because only this package knows the format. The blocks are written straight to
 * disk without fsync, so that setting up 100,000 of them takes seconds rather than minutes. For benchmarks.
 */
public final class SyntheticBlocks {
    private static final int BLOCKS_PER_OBJECT = 100;

    private SyntheticBlocks() {
    }

    /**
     * Writes {@code blocks} blocks of {@code blockSize} random bytes under {@code dir}, 100 to an object
     * ({@code bench/objects/N}); returns a cache configuration on {@code dir} that holds them all.
     */
    public static CacheConfig write(Path dir, int blocks, int blockSize) throws IOException {
        CacheLayout layout = new CacheLayout(dir);
        Path blocksDir = Files.createDirectories(layout.blocks());
        Files.createDirectories(layout.tmp());
        byte[] data = new byte[blockSize];
        new Random(1).nextBytes(data);
        int crc = BlockFile.crc(data, 0, data.length);
        for (int i = 0; i < blocks; i++) {
            int object = i / BLOCKS_PER_OBJECT;
            BlockId id = new BlockId(ObjectKey.of("bench", "objects/" + object), "etag-" + object, i % BLOCKS_PER_OBJECT);
            byte[] header = BlockFile.encodeHeader(id, (long) BLOCKS_PER_OBJECT * blockSize, blockSize, data.length, crc);
            Path path = BlockFile.pathFor(blocksDir, id);
            Files.createDirectories(path.getParent());
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(new ByteBuffer[] {ByteBuffer.wrap(header), ByteBuffer.wrap(data)});
            }
        }
        return CacheConfig.of(dir, (long) blocks * blockSize * 2).withBlockSize(blockSize);
    }
}
