package dev.ferry.tier;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.SequentialReadAhead;
import dev.ferry.cache.policy.EvictionPolicy;
import dev.ferry.cache.policy.PreferringPolicy;
import dev.ferry.settings.Settings;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.CheckedWrites;
import dev.ferry.store.chain.FirstByteTimeoutStore;
import dev.ferry.store.chain.StoreChain;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.store.shared.GroupStore;
import dev.ferry.store.shared.SharedTierStore;
import dev.ferry.time.Clock;
import dev.ferry.writeback.WriteBackConfig;
import dev.ferry.writeback.WriteBackStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * The tiers a read goes down, assembled in one place for {@code ferry serve} and {@code ferry mount}:
 *
 * <pre>
 * origin (given: S3, a folder, the embedded store)
 *   -> chain (parallel read, retry, governor, meter), bounded by first-byte-timeout
 *   -> checked writes (a PUT's answer against the bytes sent)   with {@link Builder#checkWrites}
 *   -> shared tier (a shared file system)                        with {@link Builder#sharedTier}
 *   -> regional group (and what wraps it: the daemon's hints)    with {@link Builder#group}
 *   -> local tier (CachingStore; sequential read-ahead)          unless {@link Builder#localTier} is false
 *   -> write-back                                                with {@link Builder#writeBack}
 * </pre>
 *
 * The settings are {@link TierSettings}' rows: cache-size, block-size, verify, metadata-ttl, first-byte-timeout,
 * write-back-quota, write-settle-window, read-stall-timeout. The local tier's {@link CacheConfig} is built here, and only here in the front ends. The stack
 * owns the stores it made and the origin: {@link #close} closes them, top down. Thread-safe once built.
 */
public final class TierStack implements AutoCloseable {
    private final ObjectStore origin;
    private final StoreChain chain;
    private final SharedTierStore shared;
    private final GroupStore group;
    private final ObjectStore belowCache;
    private final CachingStore cache;
    private final SequentialReadAhead readAhead;
    private final WriteBackStore writeBack;
    /** What closes the tiers under the local tier: the group's wrapper (which closes down to the origin), or the origin. */
    private final ObjectStore bottom;

    private TierStack(Builder b) throws IOException {
        Settings s = b.settings;
        origin = b.origin;
        Clock clock = b.clock;
        // a read's stalls are bounded in all, however often it resumes
        ChainConfig chainConfig = b.chainConfig.withRetry(b.chainConfig.retry().withReadStallBudget(s.get(TierSettings.READ_STALL_TIMEOUT)));
        chain = StoreChain.over(origin, chainConfig, clock);
        // an origin that accepts connections and never answers costs a reader first-byte-timeout, retries included
        ObjectStore bounded = new FirstByteTimeoutStore(chain, s.get(TierSettings.FIRST_BYTE_TIMEOUT), clock);
        if (b.checkWrites) {
            // an S3 server's PUT answer is checked against the bytes sent before the cache or write-back believes it
            bounded = new CheckedWrites(bounded);
        }
        shared = b.sharedTier == null ? null : new SharedTierStore(bounded, b.sharedTier, b.sharedTierTtl, clock);
        ObjectStore below = shared != null ? shared : bounded; // local tier -> regional group -> shared file system -> origin
        group = b.connect == null ? null : new GroupStore(below, b.connect, b.memberDownFor, clock);
        belowCache = group == null ? below : b.overGroup.apply(group);
        bottom = group == null ? origin : belowCache;
        if (b.localTier) {
            CacheConfig cc = CacheConfig.of(b.cacheDir, s.get(TierSettings.CACHE_SIZE)).withBlockSize(s.get(TierSettings.BLOCK_SIZE))
                    .withVerify(s.get(TierSettings.VERIFY)).withMetadataTtl(s.get(TierSettings.METADATA_TTL)).withPolicy(b.policyName);
            if (b.policy == null) {
                cache = new CachingStore(belowCache, cc, clock);
            } else {
                GroupStore g = group;
                EvictionPolicy<BlockId> policy = g == null ? b.policy : new PreferringPolicy<>(b.policy, id -> g.owns(id.key()));
                cache = new CachingStore(belowCache, cc, policy, clock);
            }
            if (cache.inUseElsewhere()) {
                // a library's second cache on a folder serves through; a second daemon or mount on one is a mistake
                cache.close();
                throw new IOException("the cache folder " + b.cacheDir + " is in use by another ferry daemon or mount; give each its own"
                        + " --cache-dir");
            }
            // in a regional group each object has its owner: a folder read ahead by every member would fetch every share
            boolean folders = s.get(TierSettings.READ_AHEAD_FOLDERS) && group == null;
            readAhead = b.readAhead == null ? null
                    : SequentialReadAhead.attach(cache, b.readAhead.withFolders(folders), b.readAheadExecutor, b.foldersPaused);
        } else {
            cache = null;
            readAhead = null;
        }
        if (b.writeBack) {
            // a folder store writes in this process: no attempt of its outlives the call, so none waits to settle
            Duration settle = origin instanceof FileObjectStore ? Duration.ZERO : s.get(TierSettings.WRITE_SETTLE_WINDOW);
            WriteBackConfig wc = WriteBackConfig.of(sibling(b.cacheDir, "-writeback"), s.get(TierSettings.WRITE_BACK_QUOTA))
                    .withSettleWindow(settle);
            // settling writes are checked in the store itself (the cache under write-back remembers what it was told)
            writeBack = new WriteBackStore(cache != null ? cache : belowCache, bounded, wc, clock);
            chain.retrying().onUnansweredWrite(writeBack::unanswered);
        } else {
            writeBack = null;
        }
    }

    /** A stack over {@code origin} with {@code settings} (a table holding {@link TierSettings#ROWS}); the local tier in {@code cacheDir}. */
    public static Builder over(ObjectStore origin, Settings settings, Path cacheDir) {
        return new Builder(origin, settings, cacheDir);
    }

    /** A folder beside the local tier's: {@code <cache-dir><suffix>} (write-back's journal, a mount's spool, the scratch bucket). */
    public static Path sibling(Path cacheDir, String suffix) {
        return cacheDir.resolveSibling(cacheDir.getFileName() + suffix);
    }

    public ObjectStore origin() {
        return origin;
    }

    /** The standard chain over the origin (its meter counts what the object store saw). */
    public StoreChain chain() {
        return chain;
    }

    /** The shared file system tier, or null. */
    public SharedTierStore shared() {
        return shared;
    }

    /** The regional group, or null. */
    public GroupStore group() {
        return group;
    }

    /** The store right under the local tier: the group (as wrapped), the shared tier, or the bounded chain. */
    public ObjectStore belowCache() {
        return belowCache;
    }

    /** The local tier, or null when the stack keeps none. */
    public CachingStore cache() {
        return cache;
    }

    /** Sequential read-ahead on the local tier, or null. */
    public SequentialReadAhead readAhead() {
        return readAhead;
    }

    /** Write-back, or null (writes go through). */
    public WriteBackStore writeBack() {
        return writeBack;
    }

    /** The door the front ends use ({@link NodeStores}), with {@code scratch} as the node's scratch bucket (null: none). */
    public NodeStores door(dev.ferry.writeback.Scratch scratch) {
        return new NodeStores(this, scratch);
    }

    /** Stops read-ahead and closes the stores, top down, the origin last. */
    @Override
    public void close() throws IOException {
        if (readAhead != null) {
            readAhead.detach();
        }
        try {
            if (writeBack != null) {
                writeBack.close();
            }
            if (cache != null) {
                cache.close();
            }
        } finally {
            bottom.close();
        }
    }

    /** What a stack is built with beyond its settings. Not thread-safe; one build each. */
    public static final class Builder {
        private final ObjectStore origin;
        private final Settings settings;
        private final Path cacheDir;
        private ChainConfig chainConfig = ChainConfig.DEFAULT;
        private boolean checkWrites;
        private Path sharedTier;
        private Duration sharedTierTtl = Duration.ofSeconds(60);
        private Function<String, ObjectStore> connect;
        private Duration memberDownFor;
        private Function<GroupStore, ObjectStore> overGroup;
        private boolean localTier = true;
        private String policyName = "lru";
        private EvictionPolicy<BlockId> policy;
        private SequentialReadAhead.Config readAhead;
        private Executor readAheadExecutor;
        private java.util.function.BooleanSupplier foldersPaused = () -> false;
        private boolean writeBack;
        private Clock clock = Clock.system();

        private Builder(ObjectStore origin, Settings settings, Path cacheDir) {
            this.origin = Objects.requireNonNull(origin, "origin is null");
            this.settings = Objects.requireNonNull(settings, "settings is null");
            this.cacheDir = Objects.requireNonNull(cacheDir, "cacheDir is null");
        }

        public Builder chain(ChainConfig config) {
            this.chainConfig = Objects.requireNonNull(config, "config is null");
            return this;
        }

        /** Whether a PUT's answer is checked against the bytes sent (an S3 server; a folder store writes them itself). */
        public Builder checkWrites(boolean check) {
            this.checkWrites = check;
            return this;
        }

        /** A shared file system's folder as a tier (null: none), trusting what it holds for {@code ttl}. */
        public Builder sharedTier(Path folder, Duration ttl) {
            this.sharedTier = folder;
            this.sharedTierTtl = Objects.requireNonNull(ttl, "ttl is null");
            return this;
        }

        /**
         * A regional group: {@code connect} makes a client of a member by URL, a member that fails is skipped for
         * {@code downFor}, and {@code over} wraps the group (the daemon's hints; {@code g -> g} for none). The local
         * tier's policy then prefers to keep the blocks this node owns.
         */
        public Builder group(Function<String, ObjectStore> connect, Duration downFor, Function<GroupStore, ObjectStore> over) {
            this.connect = Objects.requireNonNull(connect, "connect is null");
            this.memberDownFor = Objects.requireNonNull(downFor, "downFor is null");
            this.overGroup = Objects.requireNonNull(over, "over is null");
            return this;
        }

        /** False: no local tier (ferry mount over a ferry daemon, whose tier caches). */
        public Builder localTier(boolean keep) {
            this.localTier = keep;
            return this;
        }

        /** The local tier's eviction policy and the name it goes by ({@code planned}); default: lru by name. */
        public Builder policy(String name, EvictionPolicy<BlockId> policy) {
            this.policyName = Objects.requireNonNull(name, "name is null");
            this.policy = Objects.requireNonNull(policy, "policy is null");
            return this;
        }

        /** Sequential read-ahead on the local tier, fetching on {@code executor} (null config: none). */
        public Builder readAhead(SequentialReadAhead.Config config, Executor executor) {
            this.readAhead = config;
            this.readAheadExecutor = Objects.requireNonNull(executor, "executor is null");
            return this;
        }

        /** No folder is read ahead while {@code paused} says so (the daemon: while a job with a plan is registered). */
        public Builder foldersPausedWhile(java.util.function.BooleanSupplier paused) {
            this.foldersPaused = Objects.requireNonNull(paused, "paused is null");
            return this;
        }

        /** Whether writes are acknowledged on local disk and uploaded in the background ({@code <cache-dir>-writeback}). */
        public Builder writeBack(boolean on) {
            this.writeBack = on;
            return this;
        }

        /** The clock every tier reads time from (default: the system's). */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock is null");
            return this;
        }

        /** Builds the stack: opens the local tier and write-back's journal (resuming its uploads). */
        public TierStack build() throws IOException {
            return new TierStack(this);
        }
    }
}
