package dev.ferry.mount;

import dev.ferry.cache.VersionPin;
import dev.ferry.store.ByteRange;
import dev.ferry.store.FileRegionReadable;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectMeta;
import dev.ferry.tier.NodeStores;
import dev.ferry.tier.TierHints;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Files open for reading, each pinned to the version it opened. (A read-only mount's kernel opens no file through
 * the mount; its reads come with the version the kernel was shown, {@link #atVersion}, pinned by If-Match alone.)
 *
 * <ul>
 *   <li>Every read of a handle names its ETag ({@code If-Match}), and the handle pins its version in the local tier
 *       ({@link TierHints#pinVersion}): a newer version upstream does not drop the blocks it reads. A read the
 *       tier cannot serve and the store no longer can fails with ESTALE, never with another version's bytes.
 *   <li>The kernel's page cache is per path, not per version, so {@link #open} tells the kernel to keep it
 *       ({@code keep_cache}) only when the version opened is the one whose pages it may hold; a new version drops
 *       them; while handles of the old version are still open, a new version's handle bypasses the page cache
 *       ({@code direct_io}), so neither sees the other's pages.
 *   <li>Reads whose blocks are all on local disk are read from the block files straight into the kernel's buffer;
 *       the others go through the tier (or, without one, to the store), bytes of a block still arriving from its
 *       file straight into the kernel's buffer too, as soon as they are written.
 * </ul>
 * Thread-safe: the page states are guarded by their map; a handle is immutable.
 */
final class Reads {
    private static final ThreadLocal<byte[]> COPY = ThreadLocal.withInitial(() -> new byte[256 * 1024]);

    private final NodeStores stores;
    private final Map<String, PageState> pages = new HashMap<>();
    private final LongAdder reads = new LongAdder();

    /** Files are read through {@code stores}, the node's door. */
    Reads(NodeStores stores) {
        this.stores = stores;
    }

    /** Which version's pages the kernel may hold for a path, and how many handles of it are open. */
    private static final class PageState {
        String etag;
        int open;
    }

    /** A file opened for reading, pinned to the version it opened. */
    static final class Handle {
        final ObjectMeta meta;
        final boolean keepCache;
        private final PageState pages; // null: this handle bypasses the page cache
        private final VersionPin pin; // null: no local tier

        private Handle(ObjectMeta meta, boolean keepCache, PageState pages, VersionPin pin) {
            this.meta = meta;
            this.keepCache = keepCache;
            this.pages = pages;
            this.pin = pin;
        }

        /** True when the kernel must not cache this handle's pages (handles of another version read through them). */
        boolean directIo() {
            return pages == null;
        }
    }

    /** Opens {@code path} at version {@code meta}. */
    Handle open(String path, ObjectMeta meta) {
        boolean keep = false;
        PageState state;
        synchronized (pages) {
            state = pages.computeIfAbsent(path, p -> new PageState());
            if (meta.etag().equals(state.etag)) {
                keep = true; // the kernel's pages are this version's
                state.open++;
            } else if (state.open == 0) {
                state.etag = meta.etag(); // keep_cache off: the kernel drops the old version's pages
                state.open++;
            } else {
                state = null; // handles of another version read through the page cache: bypass it
            }
        }
        // a bypassing handle keeps the cache too: an open without keep_cache drops the inode's pages, the old version's
        return new Handle(meta, keep || state == null, state, stores.hints().pinVersion(meta));
    }

    /**
     * A read of version {@code meta} outside any open (a read-only mount's, which the kernel opens no file of):
     * each read names its ETag ({@code If-Match}), so it returns that version's bytes or fails with ESTALE, but the
     * version is not pinned in the local tier: a newer one may drop its blocks.
     */
    static Handle atVersion(ObjectMeta meta) {
        return new Handle(meta, true, null, null);
    }

    /**
     * A file's version as its folder's listing names it ({@code listed}, null when unlisted), else the door's lookup
     * ({@link NodeStores#lookup}: in a folder of small files, one GET whose bytes the read that follows finds in the
     * tier, no HEAD).
     */
    ObjectMeta described(MountPath loc, FolderEntry listed) throws IOException {
        return listed != null && listed.meta() != null ? listed.meta() : stores.lookup(loc.object());
    }

    /**
     * The version a read of {@code loc} reads: the one its folder's listing named ({@code listed}, null when
     * unlisted), which the tier is told so that its reads (and read-ahead) send no HEAD, or a newer one a HEAD or a
     * write taught the tier since; a HEAD when unlisted.
     */
    ObjectMeta versionToRead(MountPath loc, FolderEntry listed) throws IOException {
        ObjectMeta meta = described(loc, listed);
        if (listed == null || listed.meta() == null) {
            return meta;
        }
        stores.hints().listed(meta);
        ObjectMeta known = stores.hints().freshMeta(loc.object());
        return known != null ? known : meta;
    }

    /** Reads the kernel asked for so far (what its page cache did not hold). */
    long reads() {
        return reads.sum();
    }

    void release(Handle h) {
        if (h.pin != null) {
            h.pin.close();
        }
        if (h.pages != null) {
            synchronized (pages) {
                h.pages.open--;
            }
        }
    }

    /** {@code path} has a new version: its next open drops the kernel's pages (or bypasses them while old handles read). */
    void changed(String path) {
        synchronized (pages) {
            PageState s = pages.get(path);
            if (s != null) {
                s.etag = null;
                if (s.open == 0) {
                    pages.remove(path);
                }
            }
        }
    }

    /** Reads up to {@code count} bytes at {@code offset} of the handle's version into {@code buf}; the bytes read. */
    int read(Handle h, ByteBuffer buf, long count, long offset) throws IOException {
        reads.increment();
        long size = h.meta.size();
        if (offset >= size || count <= 0) {
            return 0;
        }
        int n = (int) Math.min(Math.min(count, buf.remaining()), size - offset);
        GetRequest request = new GetRequest(h.meta.key(), ByteRange.of(offset, n), h.meta.etag());
        return readInto(request, buf, n);
    }

    /**
     * Reads through the door: a read whose blocks are all on local disk goes from the block files straight into the
     * kernel's buffer, one copy ({@link GetRequest.Reach#CACHED}); the others through the tier, bytes of a block being
     * fetched (or on disk) from its file too ({@link FileRegionReadable}), bytes only in memory (or from the store,
     * with no tier) copied through an array.
     */
    private int readInto(GetRequest request, ByteBuffer buf, int n) throws IOException {
        ObjectContent resident = stores.get(request.reaching(GetRequest.Reach.CACHED));
        ObjectContent content = resident != null ? resident : stores.get(request);
        int total = 0;
        try (content; InputStream in = content.stream()) {
            FileRegionReadable regions = in instanceof FileRegionReadable r ? r : null;
            while (total < n) {
                FileRegionReadable.Region region = regions == null ? null : regions.nextRegion(n - total);
                int k = region != null ? readRegion(region, buf) : readCopy(in, buf, n - total);
                if (k < 0) {
                    break;
                }
                total += k;
            }
        }
        return total;
    }

    private static int readRegion(FileRegionReadable.Region region, ByteBuffer buf) throws IOException {
        try {
            return readFully(region.channel(), region.position(), region.length(), buf, "a cached block");
        } finally {
            region.release();
        }
    }

    /** Reads {@code length} bytes at {@code position} of {@code channel} into {@code buf} (within its limit); the bytes read. */
    private static int readFully(FileChannel channel, long position, long length, ByteBuffer buf, String what) throws IOException {
        long done = 0;
        while (done < length) {
            int lim = buf.limit();
            buf.limit((int) Math.min(lim, buf.position() + length - done));
            int k;
            try {
                k = channel.read(buf, position + done);
            } finally {
                buf.limit(lim);
            }
            if (k <= 0) {
                throw new IOException(what + " ended early");
            }
            done += k;
        }
        return (int) length;
    }

    private static int readCopy(InputStream in, ByteBuffer buf, int most) throws IOException {
        byte[] tmp = COPY.get();
        int k = in.read(tmp, 0, Math.min(tmp.length, most));
        if (k > 0) {
            buf.put(tmp, 0, k);
        }
        return k;
    }
}
