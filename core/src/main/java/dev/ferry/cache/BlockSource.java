package dev.ferry.cache;

import dev.ferry.store.FileRegionReadable.Region;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where the bytes of one block come from for one reader of a {@link BlockStream}: a resident block's file
 * ({@link InFile}, pinned), a copy in memory ({@link InMemory}), a refused block's bytes in a nameless
 * temporary file ({@link Spill}), or a block being fetched, read as it arrives ({@link Fill}). Each counts the
 * bytes it hands out as from the cache or not, as the reader's case says.
 *
 * <p>Not thread-safe: a source belongs to one reader; what it shares (a pinned entry, a channel, a fill) is
 * guarded where it lives.
 */
interface BlockSource {
    /** Reads up to {@code len} bytes of the block from {@code offsetInBlock} into {@code b}. */
    int read(byte[] b, int off, int len, long offsetInBlock) throws IOException;

    /** Up to {@code maxBytes} from {@code offsetInBlock} as a region of a file; null when they are not in one. */
    Region region(int maxBytes, long offsetInBlock) throws IOException;

    /** Gives back what the source holds (a pin, a channel, an attachment). */
    void release();

    /** A block's bytes in memory: checked under verify always, or kept there because the disk refused them. */
    final class InMemory implements BlockSource {
        private final CacheCounters counters;
        private final byte[] data;
        private final boolean fromCache;
        private final long base;

        InMemory(CacheCounters counters, byte[] data, boolean fromCache) {
            this(counters, data, fromCache, 0);
        }

        /** {@code data} holds the block's bytes from {@code base} on (all of them when 0). */
        InMemory(CacheCounters counters, byte[] data, boolean fromCache, long base) {
            this.counters = counters;
            this.data = data;
            this.fromCache = fromCache;
            this.base = base;
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) {
            int at = (int) (offsetInBlock - base);
            int n = Math.min(len, data.length - at);
            System.arraycopy(data, at, b, off, n);
            if (fromCache) {
                counters.bytesFromCache.add(n);
            }
            return n;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) {
            return null;
        }

        @Override
        public void release() {
        }
    }

    /** A resident block, pinned, read from its block file. */
    final class InFile implements BlockSource {
        private final BlockIndex blockIndex;
        private final CacheCounters counters;
        private final BlockEntry entry;
        private final OpenFiles.Handle file;
        private final boolean fromCache;

        /**
         * {@code entry} is pinned; {@link #release} unpins it. Its bytes count as from the cache when {@code fromCache}
         * (not for a block of the reader's own run: counted as from upstream already).
         */
        InFile(BlockIndex blockIndex, CacheCounters counters, BlockEntry entry, OpenFiles.Handle file, boolean fromCache) {
            this.fromCache = fromCache;
            this.blockIndex = blockIndex;
            this.counters = counters;
            this.entry = entry;
            this.file = file;
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) throws IOException {
            int want = (int) Math.min(len, entry.dataLength - offsetInBlock);
            ByteBuffer buf = ByteBuffer.wrap(b, off, want);
            while (buf.hasRemaining()) {
                int n = file.channel.read(buf, entry.headerLength + offsetInBlock + (buf.position() - off));
                if (n < 0) {
                    throw new BlockFile.CorruptBlockException(entry.path + ": ends early");
                }
            }
            if (fromCache) {
                counters.bytesFromCache.add(want);
            }
            return want;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) {
            int want = (int) Math.min(maxBytes, entry.dataLength - offsetInBlock);
            file.retain();
            if (fromCache) {
                counters.bytesFromCache.add(want);
            }
            return new Region(file.channel, entry.headerLength + offsetInBlock, want, file::release);
        }

        @Override
        public void release() {
            file.release();
            blockIndex.unpin(entry);
        }
    }

    /**
     * Bytes of a block the policy refused, in a temporary file of this reader's alone, already deleted (its open
     * channel reads it): a reader that stops reading holds no memory for them. Not counted: a miss, counted when
     * fetched.
     */
    final class Spill implements BlockSource {
        private final SharedChannel file;
        private final long base;
        private final long length;

        /** {@code file} holds the block's bytes from {@code base} on, {@code length} of them, at its start; held once for this source. */
        Spill(SharedChannel file, long base, long length) {
            this.file = file;
            this.base = base;
            this.length = length;
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) throws IOException {
            long at = offsetInBlock - base;
            int want = (int) Math.min(len, length - at);
            ByteBuffer buf = ByteBuffer.wrap(b, off, want);
            while (buf.hasRemaining()) {
                if (file.channel.read(buf, at + (buf.position() - off)) < 0) {
                    throw new IOException("a temporary file of the local tier ends early");
                }
            }
            return want;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) {
            long at = offsetInBlock - base;
            if (!file.retain()) {
                throw new IllegalStateException("a region asked of a released source");
            }
            return new Region(file.channel, at, Math.min(maxBytes, length - at), file::release);
        }

        @Override
        public void release() {
            file.release();
        }
    }

    /**
     * A block being fetched, for one reader attached to it: its bytes from the block's file as they arrive. A
     * block of the reader's own run ({@code own}) was counted as a miss by the run; another's is a hit.
     */
    final class Fill implements BlockSource {
        private final CacheCounters counters;
        private final BlockFill fill;
        final boolean own;

        /** {@code fill} is attached; {@link #release} detaches it. */
        Fill(CacheCounters counters, BlockFill fill, boolean own) {
            this.counters = counters;
            this.fill = fill;
            this.own = own;
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) throws IOException {
            int n = fill.read(b, off, len, (int) offsetInBlock);
            if (!own) {
                counters.bytesFromCache.add(n); // another reader's fetch: a hit, like a resident block
            }
            return n;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) throws IOException {
            Region r = fill.region((int) offsetInBlock, maxBytes);
            if (r != null && !own) {
                counters.bytesFromCache.add(r.length());
            }
            return r;
        }

        @Override
        public void release() {
            fill.detach();
        }
    }
}
