package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.file.FileObjectStore;
import dev.ferry.tier.TierStack;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import org.cryptomator.jfuse.api.DirFiller;
import org.cryptomator.jfuse.api.FileInfo;
import org.cryptomator.jfuse.api.Stat;
import org.cryptomator.jfuse.api.TimeSpec;

/**
 * {@link FerryFs} driven without FUSE: the calls libfuse would make, with the kernel's structs as plain holders, over
 * a folder store (bucket {@code data}) and the tiers {@code ferry mount} builds. What only the kernel shows (its page
 * cache, no-open mode, a process's view of the mount) stays with the tests of a real mount.
 */
final class FsDriver implements AutoCloseable {
    static final int O_RDONLY = 0;
    static final int O_WRONLY = 1;
    static final int O_TRUNC = 01000;

    final FileObjectStore store;
    final TierStack tiers;
    final FerryFs fs;
    private final ExecutorService listers = Executors.newVirtualThreadPerTaskExecutor();

    /** A driver over a folder store in {@code dir}, with {@code settings} added to the mount's (e.g. write-through). */
    FsDriver(Path dir, Map<String, String> settings) throws IOException {
        Map<String, String> s = new HashMap<>(Map.of("mountpoint", dir.resolve("mnt").toString(), "store-root",
                dir.resolve("store").toString(), "cache-dir", dir.resolve("cache").toString()));
        s.putAll(settings);
        MountConfig config = MountConfig.from(s);
        store = new FileObjectStore(config.storeRoot());
        store.createBucket("data");
        tiers = TierStack.over(store, config.values(), config.cacheDir()).writeBack(!config.writeThrough()).build();
        Path spool = TierStack.sibling(config.cacheDir(), "-spool");
        Files.createDirectories(spool);
        fs = new FerryFs(null, config, Clock.system(), tiers.door(null), store, spool, listers);
    }

    /** What the kernel's {@code struct stat} is told. */
    static final class Attr implements Stat {
        private int mode;
        private long size;
        private final Time a = new Time();
        private final Time c = new Time();
        private final Time m = new Time();
        private final Time birth = new Time();

        boolean isDir() {
            return S_ISDIR.test(mode);
        }

        boolean isFile() {
            return S_ISREG.test(mode);
        }

        @Override
        public TimeSpec aTime() {
            return a;
        }

        @Override
        public TimeSpec cTime() {
            return c;
        }

        @Override
        public TimeSpec mTime() {
            return m;
        }

        @Override
        public TimeSpec birthTime() {
            return birth;
        }

        @Override
        public void setMode(int mode) {
            this.mode = mode;
        }

        @Override
        public int getMode() {
            return mode;
        }

        @Override
        public void setUid(int uid) {
        }

        @Override
        public int getUid() {
            return 0;
        }

        @Override
        public void setGid(int gid) {
        }

        @Override
        public int getGid() {
            return 0;
        }

        @Override
        public void setNLink(short n) {
        }

        @Override
        public long getNLink() {
            return 1;
        }

        @Override
        public void setSize(long size) {
            this.size = size;
        }

        @Override
        public long getSize() {
            return size;
        }
    }

    private static final class Time implements TimeSpec {
        private Instant at = Instant.EPOCH;

        @Override
        public boolean isUtimeOmit() {
            return false;
        }

        @Override
        public boolean isUtimeNow() {
            return false;
        }

        @Override
        public void set(Instant instant) {
            at = instant;
        }

        @Override
        public Instant get() {
            return at;
        }
    }

    /** What the kernel's {@code struct fuse_file_info} holds of an open: its handle, its flags, and the bits set on it. */
    static final class Open implements FileInfo, FileInfoBits.Told {
        private final int flags;
        private long fh;
        boolean keepCache;
        boolean directIo;

        Open(int flags) {
            this.flags = flags;
        }

        @Override
        public void openBits(boolean keepCache, boolean directIo, boolean noFlush) {
            this.keepCache = keepCache;
            this.directIo = directIo;
        }

        @Override
        public long getFh() {
            return fh;
        }

        @Override
        public void setFh(long fh) {
            this.fh = fh;
        }

        @Override
        public int getFlags() {
            return flags;
        }

        @Override
        public Set<StandardOpenOption> getOpenFlags() {
            return (flags & 3) == 0 ? Set.of(StandardOpenOption.READ) : Set.of(StandardOpenOption.WRITE);
        }

        @Override
        public long getLockOwner() {
            return 0;
        }
    }

    /** {@code getattr}: its attributes, or fails naming the errno. */
    Attr stat(String path) {
        Attr a = new Attr();
        int r = fs.getattr(path, a, null);
        assertThat(r).as("getattr %s", path).isZero();
        return a;
    }

    /** {@code getattr}'s answer: 0 or a negated errno. */
    int statErrno(String path) {
        return fs.getattr(path, new Attr(), null);
    }

    Open open(String path, int flags) {
        Open o = new Open(flags);
        assertThat(fs.open(path, o)).as("open %s", path).isZero();
        return o;
    }

    Open create(String path) {
        Open o = new Open(O_WRONLY);
        assertThat(fs.create(path, 0644, o)).as("create %s", path).isZero();
        return o;
    }

    byte[] read(String path, Open o, long offset, int count) {
        ByteBuffer buf = ByteBuffer.allocate(count);
        int n = fs.read(path, buf, count, offset, o);
        assertThat(n).as("read %s", path).isGreaterThanOrEqualTo(0);
        byte[] out = new byte[n];
        buf.flip().get(out);
        return out;
    }

    void write(String path, Open o, byte[] data) {
        assertThat(fs.write(path, ByteBuffer.wrap(data), data.length, 0, o)).as("write %s", path).isEqualTo(data.length);
    }

    /** {@code close()} of a handle: FLUSH, then RELEASE, as the kernel sends them; FLUSH's answer. */
    int close(String path, Open o) {
        int flushed = fs.flush(path, o);
        assertThat(fs.release(path, o)).isZero();
        return flushed;
    }

    /** The names a folder lists (without {@code .} and {@code ..}). */
    List<String> list(String path) {
        Open o = new Open(O_RDONLY);
        assertThat(fs.opendir(path, o)).as("opendir %s", path).isZero();
        List<String> names = new ArrayList<>();
        DirFiller filler = new DirFiller() {
            @Override
            public int fill(String name, Consumer<Stat> attrs, long offset, int flags) {
                if (!name.equals(".") && !name.equals("..")) {
                    names.add(name);
                }
                return 0;
            }
        };
        assertThat(fs.readdir(path, filler, 0, o, 0)).as("readdir %s", path).isZero();
        fs.releasedir(path, o);
        return names;
    }

    @Override
    public void close() throws IOException {
        listers.shutdownNow();
        tiers.close();
    }
}
