package dev.ferry.cache;

import dev.ferry.store.FileRegionReadable.Region;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where the bytes of one block come from for one reader of a {@link BlockStream}: a resident block's file
 * ({@link InFile}, pinned), a copy in memory ({@link InMemory}), a refused block's bytes in a nameless
 * temporary file ({@link Spill}), or a block being fetched, read as it arrives ({@link Fill}). Each counts the
 * bytes it hands out as from the cache or not, as the reader's case says, and tells the tier's {@link TierLedger}
 * where they came from (a resident block with when it arrived; every other source as waited for).
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

    /** This source goes on a read of the block that another source began: its bytes are not a new read. */
    void continuesRead();

    /** One read of one block as its source tells the ledger: the first bytes count the read. Not thread-safe. */
    final class Served {
        private final CacheCounters counters;
        private final BlockId id;
        private final long arrivedNanos;
        private final boolean fromCache;
        private boolean first = true;

        /** {@code fromCache}: also counted in the tier's bytes from the cache (its hit rate). */
        Served(CacheCounters counters, BlockId id, long arrivedNanos, boolean fromCache) {
            this.counters = counters;
            this.id = id;
            this.arrivedNanos = arrivedNanos;
            this.fromCache = fromCache;
        }

        void add(long bytes) {
            if (fromCache) {
                counters.bytesFromCache.add(bytes);
            }
            counters.served(id, bytes, arrivedNanos, first);
            first = false;
        }

        void continues() {
            first = false;
        }
    }

    /** A block's bytes in memory: checked under verify always, or kept there because the disk refused them. */
    final class InMemory implements BlockSource {
        private final Served served;
        private final byte[] data;
        private final long base;

        /**
         * {@code data} holds the block's bytes from {@code base} on (all of them when 0); {@code served} says where
         * they came from.
         */
        InMemory(Served served, byte[] data, long base) {
            this.served = served;
            this.data = data;
            this.base = base;
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) {
            int at = (int) (offsetInBlock - base);
            int n = Math.min(len, data.length - at);
            System.arraycopy(data, at, b, off, n);
            served.add(n);
            return n;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) {
            return null;
        }

        @Override
        public void release() {
        }

        @Override
        public void continuesRead() {
            served.continues();
        }
    }

    /** A resident block, pinned, read from its block file. */
    final class InFile implements BlockSource {
        private final BlockIndex blockIndex;
        private final BlockEntry entry;
        private final OpenFiles.Handle file;
        private final Served served;

        /**
         * {@code entry} is pinned; {@link #release} unpins it. {@code served} says where its bytes came from (not
         * from the cache for a block of the reader's own run: counted as from upstream already).
         */
        InFile(BlockIndex blockIndex, BlockEntry entry, OpenFiles.Handle file, Served served) {
            this.served = served;
            this.blockIndex = blockIndex;
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
            served.add(want);
            return want;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) {
            int want = (int) Math.min(maxBytes, entry.dataLength - offsetInBlock);
            file.retain();
            served.add(want);
            return new Region(file.channel, entry.headerLength + offsetInBlock, want, file::release);
        }

        @Override
        public void release() {
            file.release();
            blockIndex.unpin(entry);
        }

        @Override
        public void continuesRead() {
            served.continues();
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
        private final Served served;

        /**
         * {@code file} holds the block's bytes from {@code base} on, {@code length} of them, at its start; held once for
         * this source. {@code served} tells the ledger (as waited for).
         */
        Spill(SharedChannel file, long base, long length, Served served) {
            this.served = served;
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
            served.add(want);
            return want;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) {
            long at = offsetInBlock - base;
            if (!file.retain()) {
                throw new IllegalStateException("a region asked of a released source");
            }
            long n = Math.min(maxBytes, length - at);
            served.add(n);
            return new Region(file.channel, at, n, file::release);
        }

        @Override
        public void release() {
            file.release();
        }

        @Override
        public void continuesRead() {
            served.continues();
        }
    }

    /**
     * A block being fetched, for one reader attached to it: its bytes from the block's file as they arrive. A
     * block of the reader's own run ({@code own}) was counted as a miss by the run; another's is a hit.
     */
    final class Fill implements BlockSource {
        private final BlockFill fill;
        private final Served served;
        final boolean own;

        /**
         * {@code fill} is attached; {@link #release} detaches it. Another reader's fetch ({@code own} false) counts
         * in the tier's hit rate like a resident block; for the ledger, either was waited for.
         */
        Fill(CacheCounters counters, BlockFill fill, boolean own) {
            this.fill = fill;
            this.own = own;
            this.served = new Served(counters, fill.id, TierLedger.WAITED, !own);
        }

        @Override
        public int read(byte[] b, int off, int len, long offsetInBlock) throws IOException {
            int n = fill.read(b, off, len, (int) offsetInBlock);
            if (n > 0) {
                served.add(n);
            }
            return n;
        }

        @Override
        public Region region(int maxBytes, long offsetInBlock) throws IOException {
            Region r = fill.region((int) offsetInBlock, maxBytes);
            if (r != null) {
                served.add(r.length());
            }
            return r;
        }

        @Override
        public void release() {
            fill.detach();
        }

        @Override
        public void continuesRead() {
            served.continues();
        }
    }
}
