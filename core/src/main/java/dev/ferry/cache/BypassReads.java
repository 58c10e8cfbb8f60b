package dev.ferry.cache;

import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * Reads of blocks the policy refused (counted as bypassed by the index): the bytes a read needs of such a block
 * are fetched for that read alone and kept nowhere, in a temporary file deleted as soon as it is open (its channel
 * reads it; nothing is left behind whatever happens), or in memory when the disk refuses them. A reader that stops
 * reading holds no memory for them. Counted as a miss.
 *
 * <p>Thread-safe: stateless beyond its collaborators; each read has its own file.
 */
final class BypassReads {
    private final ObjectStore upstream;
    private final CacheCounters counters;
    private final Path tmpDir;
    private final Consumer<ObjectKey> onVersionChanged;
    private final int blockSize;

    /**
     * Blocks of {@code blockSize} bytes; {@code onVersionChanged} is told when upstream refuses a fetch pinned to an
     * ETag: the object changed.
     */
    BypassReads(ObjectStore upstream, CacheLayout layout, CacheCounters counters, int blockSize, Consumer<ObjectKey> onVersionChanged) {
        this.blockSize = blockSize;
        this.upstream = upstream;
        this.counters = counters;
        this.tmpDir = layout.tmp();
        this.onVersionChanged = onVersionChanged;
    }

    /**
     * The bytes {@code [from, to)} of a block the policy refused (of {@code meta}'s block starting at
     * {@code blockStart}), fetched now and kept nowhere: in a temporary file deleted at once and read through
     * its open channel, so that a reader that stops reading holds no memory for them; in memory when the disk
     * refuses them (counted as a write failure).
     */
    BlockSource fetch(ObjectMeta meta, long from, long to, long blockStart) throws IOException {
        counters.upstreamRequests.increment();
        try (ObjectContent c = upstream.get(new GetRequest(meta.key(), ByteRange.of(from, to - from), meta.etag()))) {
            return readFrom(meta, c.stream(), from, to, blockStart);
        } catch (IOException | RuntimeException e) {
            if (e instanceof StoreException se && se.kind() == StoreException.Kind.PRECONDITION_FAILED) {
                onVersionChanged.accept(meta.key());
            }
            throw e;
        }
    }

    /**
     * {@link #fetch}'s bytes {@code [from, to)} read from {@code in}, a read upstream already open at
     * {@code from} (a miss's GET whose first block the policy refused); the caller closes it.
     */
    BlockSource readFrom(ObjectMeta meta, InputStream in, long from, long to, long blockStart) throws IOException {
        int length = (int) (to - from);
        FileChannel spill = null;
        byte[] memory = null;
        try {
            try {
                Path temp = tmpDir.resolve(UUID.randomUUID() + ".tmp");
                spill = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
                Files.delete(temp); // the open channel keeps the bytes; nothing is left behind, whatever happens
            } catch (IOException e) {
                closeQuietly(spill);
                spill = null;
                counters.writeFailed(e);
                memory = new byte[length];
            }
            byte[] slice = new byte[Math.min(BlockFill.SLICE, length)];
            int got = 0;
            while (got < length) {
                int n = in.read(slice, 0, Math.min(slice.length, length - got));
                if (n < 0) {
                    throw new StoreException(StoreException.Kind.RETRYABLE, 0, "upstream sent " + got + " of " + length + " bytes of "
                            + meta.key() + " at " + from, null);
                }
                if (spill != null) {
                    try {
                        ByteBuffer buf = ByteBuffer.wrap(slice, 0, n);
                        while (buf.hasRemaining()) {
                            spill.write(buf, got + (long) buf.position());
                        }
                    } catch (IOException e) {
                        counters.writeFailed(e);
                        memory = new byte[length];
                        ByteBuffer back = ByteBuffer.wrap(memory, 0, got);
                        while (back.hasRemaining()) {
                            if (spill.read(back, back.position()) < 0) {
                                throw new IOException("cannot read back a temporary file after a failed write", e);
                            }
                        }
                        closeQuietly(spill);
                        spill = null;
                    }
                }
                if (spill == null) {
                    System.arraycopy(slice, 0, memory, got, n);
                }
                got += n;
            }
        } catch (IOException | RuntimeException e) {
            closeQuietly(spill);
            throw e;
        }
        counters.misses.increment();
        counters.bytesFromUpstream.add(length);
        BlockId id = new BlockId(meta.key(), meta.etag(), blockStart / blockSize);
        counters.fetched(id, length, false, true); // a request of its own, or a miss's answer no run took
        BlockSource.Served served = new BlockSource.Served(counters, id, TierLedger.WAITED, false);
        return spill != null ? new BlockSource.Spill(SharedChannel.of(spill), from - blockStart, length, served)
                : new BlockSource.InMemory(served, memory, from - blockStart);
    }

    private static void closeQuietly(FileChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing kept in it
            }
        }
    }
}
