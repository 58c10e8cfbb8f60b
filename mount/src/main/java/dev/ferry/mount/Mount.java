package dev.ferry.mount;

import dev.ferry.cache.SequentialReadAhead;
import dev.ferry.s3client.S3Credentials;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.BucketOperations;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.chain.MeterSnapshot;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.tier.LocalWrites;
import dev.ferry.tier.NodeStores;
import dev.ferry.tier.TierStack;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.cryptomator.jfuse.api.Fuse;
import org.cryptomator.jfuse.api.FuseBuilder;
import org.cryptomator.jfuse.api.FuseMountFailedException;

/**
 * A mounted ferry file system: the same tier stack as {@code ferry serve}, built by {@link TierStack} (origin ->
 * meter, governor, retry, parallel reads -> first-byte timeout -> local tier -> write-back), served through FUSE
 * at the mountpoint.
 * {@link #close} unmounts, waits up to {@code flush-timeout} for pending uploads, and closes the tiers.
 * Thread-safe.
 */
public final class Mount implements AutoCloseable {
    private final MountConfig config;
    private final TierStack tiers;
    private final NodeStores stores;
    private final ExecutorService fetchers = Executors.newVirtualThreadPerTaskExecutor();
    private final FerryFs fs;
    private final Fuse fuse;
    private final Consumer<String> say;
    private final String description;
    private boolean closed;

    private Mount(MountConfig config, Clock clock, Consumer<String> say) throws IOException {
        this.config = config;
        this.say = say;
        boolean root = "root".equals(System.getProperty("user.name"));
        Path lib = FuseCheck.check(Path.of("/dev/fuse"), FuseCheck.LIBRARY_DIRS, root);
        String note = FuseCheck.prepareMountpoint(config.mountpoint());
        if (note != null) {
            say.accept(note);
        }
        BucketOperations buckets;
        ObjectStore origin;
        if (config.upstream() != null) {
            S3ObjectStore store = new S3ObjectStore(S3StoreConfig.endpoint(config.upstream(), credentials(config.upstream()))
                    .withSocketTimeout(dev.ferry.tier.TierSettings.socketTimeout(config.values())), java.util.Map.of(),
                    clock);
            origin = store;
            buckets = store;
            description = dev.ferry.util.Secrets.shown(config.upstream());
        } else {
            if (!Files.isDirectory(config.storeRoot())) {
                throw new FuseCheck.FuseUnavailableException("the store root " + config.storeRoot() + " is not a folder.");
            }
            FileObjectStore store = new FileObjectStore(config.storeRoot());
            origin = store;
            buckets = store;
            description = "folder " + config.storeRoot();
        }
        tiers = TierStack.over(origin, config.values(), config.cacheDir())
                // cache-size 0, over a ferry daemon: its local tier caches, prefetches by plan and reads ahead
                .localTier(config.hasLocalTier())
                .readAhead(config.readAhead() == 0 ? null : readAheadConfig(config), fetchers)
                .writeBack(!config.writeThrough())
                .build();
        stores = tiers.door(null);
        Path spool = TierStack.sibling(config.cacheDir(), "-spool");
        Files.createDirectories(spool);
        try (Stream<Path> s = Files.list(spool)) { // files a crashed mount was writing: never acknowledged, never objects
            for (Path p : s.toList()) {
                Files.deleteIfExists(p);
            }
        }
        FuseBuilder builder;
        try {
            builder = Fuse.builder();
        } catch (UnsupportedOperationException e) {
            closeTiers();
            throw new FuseCheck.FuseUnavailableException("FUSE is not available: jfuse has no implementation for this platform ("
                    + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ").");
        }
        builder.setLibraryPath(lib.toString());
        fs = new FerryFs(builder.errno(), config, clock, stores, buckets, spool, fetchers);
        List<String> options = new ArrayList<>(List.of("fsname=ferry", "subtype=ferry", "attr_timeout=" + kernelTimeout(config),
                "entry_timeout=" + kernelTimeout(config), "negative_timeout=0"));
        if (config.readOnly()) {
            options.add("ro");
        }
        try {
            fuse = builder.build(fs);
            fuse.mount("ferry", config.mountpoint(), "-o", String.join(",", options));
            if (config.kernelReadAhead() > 0) {
                String why = KernelReadAhead.set(config.mountpoint(), config.kernelReadAhead());
                if (why != null) {
                    say.accept("the kernel reads ahead of this mount's readers in its own steps (128 KiB), not the "
                            + config.kernelReadAhead() / 1024 + " KiB of --kernel-read-ahead: " + why + ".");
                }
            }
            Thread.ofVirtual().name("ferry-mount-probe").start(() -> {
                String why = fs.probe();
                if (why != null && !isClosed()) { // a mount closed meanwhile closed the client under it
                    say.accept("the store at " + description + " did not answer a first request (" + why
                            + "); reads through the mount fail until it does.");
                }
            });
        } catch (UnsatisfiedLinkError e) {
            closeTiers();
            throw new FuseCheck.FuseUnavailableException("FUSE is not available: libfuse3 (" + lib + ") could not be loaded ("
                    + e.getMessage() + "); install fuse3 (apt-get install fuse3).");
        } catch (FuseMountFailedException | RuntimeException e) {
            closeTiers();
            throw new FuseCheck.FuseUnavailableException("cannot mount at " + config.mountpoint() + ": " + e.getMessage()
                    + " (FUSE mounts need root, or fusermount3 and a user allowed to use /dev/fuse).");
        }
    }

    /** The longest time the kernel keeps a name or attributes without asking the mount: a day. */
    static final Duration LONGEST_KERNEL_TIMEOUT = Duration.ofDays(1);

    /**
     * How long the kernel keeps a name and its attributes without asking the mount again ({@code entry_timeout},
     * {@code attr_timeout}): {@code metadata-ttl}, the time the mount itself trusts a listing or a HEAD. S3 objects
     * are immutable per ETag and the store's listings are the metadata (see {@link FolderListings}), so a shorter kernel
     * timeout would only repeat lookups whose answer the mount already holds (a cold epoch over small files paid a
     * lookup per file); a change made behind the mount's back is seen within about twice {@code metadata-ttl}
     * (the kernel's clock starts at its lookup). Changes made through the mount update the kernel's view at once.
     * Names not found are not kept ({@code negative_timeout=0}): a file created upstream is found at its first lookup.
     * At most {@link #LONGEST_KERNEL_TIMEOUT}: past it the kernel asks the mount, which answers from what it holds (with
     * {@code metadata-ttl indefinite}, for good), so a longer one would save nothing.
     */
    static String kernelTimeout(MountConfig config) {
        Duration t = config.metadataTtl().compareTo(LONGEST_KERNEL_TIMEOUT) > 0 ? LONGEST_KERNEL_TIMEOUT : config.metadataTtl();
        return String.format(java.util.Locale.ROOT, "%.3f", t.toMillis() / 1000.0);
    }

    /**
     * The mount's read-ahead is the daemon's ({@link SequentialReadAhead}): sequential readers of an object, over
     * every handle, get the next {@code read-ahead} bytes fetched in parallel, one ranged GET per block, within one
     * budget of bytes in flight; a file of at most {@code read-ahead} bytes, and at most {@link #WHOLE_FILE_BYTES}, is
     * fetched whole at its first read (most readers of a small file read it all: npz, images, Parquet footers then
     * bodies), and a read of a file's last block before its body (a footer) does not keep the read-ahead from starting
     * when the body is read.
     */
    static SequentialReadAhead.Config readAheadConfig(MountConfig config) {
        int blocks = (int) Math.max(1, Math.min(1024, (config.readAhead() + config.blockSize() - 1) / config.blockSize()));
        int whole = (int) Math.max(1, Math.min(blocks, WHOLE_FILE_BYTES / config.blockSize()));
        SequentialReadAhead.Config d = SequentialReadAhead.Config.DEFAULT;
        return new SequentialReadAhead.Config(d.minStreak(), d.window(), blocks, d.budgetBytes(), d.trackedObjects(), whole, true);
    }

    /**
     * The largest file fetched whole at its first read. A reader may read a large file in part (a header, a
     * footer, an index), so a deeper read-ahead waits for it to read on before fetching more.
     */
    static final long WHOLE_FILE_BYTES = 64L << 20;

    /** Keys from the environment; a ferry daemon on this machine without them takes placeholders, as the CLI's clients do. */
    private static S3Credentials credentials(java.net.URI upstream) {
        S3Credentials env = S3Credentials.fromEnvironment();
        if (!env.isDefaultChain()) {
            return env;
        }
        try {
            return S3Credentials.forEndpoint(java.net.InetAddress.getByName(upstream.getHost()).isLoopbackAddress());
        } catch (java.net.UnknownHostException e) {
            return env;
        }
    }

    /**
     * Mounts; the file system answers when this returns. {@code clock} ages listings and dates what is written;
     * {@code say} receives notes for the user (one sentence each).
     */
    public static Mount start(MountConfig config, Clock clock, Consumer<String> say) throws IOException {
        return new Mount(config, clock, say);
    }

    public MountConfig config() {
        return config;
    }

    /** What the mount fronts, for people. */
    public String description() {
        return description;
    }

    /** The mount's tiers (its local tier is null with {@code cache-size 0}, over a ferry daemon; its write-back with write-through). */
    public TierStack stack() {
        return tiers;
    }

    /** Requests and bytes the object store has seen. */
    public MeterSnapshot meter() {
        return tiers.chain().meter().snapshot();
    }

    /** Blocks fetched ahead of sequential readers so far (handed to the fetchers). */
    public long readAheadBlocks() {
        return tiers.readAhead() == null ? 0 : tiers.readAhead().scheduledBlocks();
    }

    /** Reads of files the kernel asked the mount for so far: those its page cache could not answer. */
    public long fileReads() {
        return fs.fileReads();
    }

    /** OPEN requests of files the kernel sent so far: one per open, except on a read-only mount (see docs/mount.md). */
    public long fileOpens() {
        return fs.opens();
    }

    /** FLUSH requests the kernel sent so far: a close of a file open for writing sends one, one open to read none. */
    public long flushes() {
        return fs.flushes();
    }

    /** Folders being listed now, ahead of a reader (as {@code os.walk} goes) or for one. */
    public int foldersBeingListed() {
        return fs.foldersBeingListed();
    }

    private synchronized boolean isClosed() {
        return closed;
    }

    /** Unmounts, waits up to flush-timeout for pending uploads (what is left resumes at the next start), closes the tiers. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            fuse.close();
        } catch (TimeoutException e) {
            say.accept("the FUSE loop did not stop within 10 s; unmounted lazily.");
        }
        LocalWrites writes = stores.writes();
        if (stores.writesBack(false)) {
            try {
                dev.ferry.writeback.FlushResult r = writes.flush(config.flushTimeout());
                if (!r.complete()) {
                    say.accept(writes.pendingObjects() + " written files are not uploaded yet; they are journaled in "
                            + TierStack.sibling(config.cacheDir(), "-writeback")
                            + " and upload when ferry mount starts again with the same --cache-dir.");
                }
            } catch (java.io.InterruptedIOException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeTiers();
    }

    private void closeTiers() throws IOException {
        fetchers.shutdownNow();
        tiers.close(); // read-ahead stops, write-back, the local tier, the origin
    }
}
