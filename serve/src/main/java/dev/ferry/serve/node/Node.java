package dev.ferry.serve.node;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.SequentialReadAhead;
import dev.ferry.cache.policy.PlannedPolicy;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.metrics.FerryMetrics;
import dev.ferry.plan.Prefetcher;
import dev.ferry.s3.S3Credentials;
import dev.ferry.s3.S3ObjectStore;
import dev.ferry.s3.S3StoreConfig;
import dev.ferry.serve.membership.MemberProber;
import dev.ferry.serve.membership.Membership;
import dev.ferry.serve.membership.SelfAddress;
import dev.ferry.serve.protocol.FerryHeaders;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PendingUploads;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.StoreChain;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.store.tier.GroupStore;
import dev.ferry.store.tier.SharedTierStore;
import dev.ferry.tier.TierStack;
import dev.ferry.time.Clock;
import dev.ferry.writeback.Scratch;
import dev.ferry.writeback.WriteBackStore;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node of {@code ferry serve}, without its network front: the tier stack built from the config by
 * {@link TierStack} (as {@code ferry mount} builds its own), in the order a read goes down it, and what runs
 * beside it (metrics, prefetch, the status and expiry timers).
 *
 * <pre>
 * origin (S3, a folder, or the embedded store)
 *   -> chain (parallel read, retry, governor, meter), bounded by first-byte-timeout
 *   -> checked writes (a PUT's answer against the bytes sent)   over S3 and the embedded store
 *   -> shared tier (a shared file system)        when shared-tier is set
 *   -> regional group -> hints (last epoch's reader first)   when group is set
 *   -> local tier (CachingStore, the plan-aware policy; sequential read-ahead)
 *   -> write-back (+ local multipart staging)     when write-back is set; scratch beside it
 * </pre>
 *
 * Jobs ({@code serve.jobs}) call down into it: {@link #follow} steers eviction by their plans, {@link #prefetcher}
 * fetches their next blocks by time to need, {@link #holders} tells the hints who read a block last epoch. Thread-safe.
 */
public final class Node implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Node.class);
    private static final int PREFETCH_THREADS = 8;

    private final NodeConfig config;
    private final EmbeddedStore embedded;
    private final Origin origin;
    private final TierStack tiers;
    private final StoreChain chain;
    private final SharedTierStore shared;
    private final GroupStore group;
    private final HintedStore hinted;
    private final ObjectStore belowCache;
    private final PlannedPolicy<BlockId> policy = new PlannedPolicy<>();
    private final CachingStore cache;
    private final WriteBackStore writeBack;
    private final LocalMultipart localMultipart;
    private final Scratch scratch;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final FerryMetrics metrics;
    private final ServeStats stats = new ServeStats();
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ferry-status");
        t.setDaemon(true);
        return t;
    });
    private final Clock clock;
    private final long startNanos;
    /** Per registered job with the node partition: the shards whose home is this node (read here, kept as owned). */
    private final Map<String, Set<ObjectKey>> homes = new ConcurrentHashMap<>();
    private volatile Function<BlockId, String> holders = block -> null;
    private Membership membership;
    private MemberProber prober;
    private volatile String planOwner;

    private Node(NodeConfig config, Clock clock, Executor readAhead) throws IOException {
        this.config = config;
        this.clock = clock;
        this.startNanos = clock.nanoTime();
        EmbeddedStore e = null;
        if (config.upstream() != null) {
            origin = new Origin(new S3ObjectStore(S3StoreConfig.endpoint(config.upstream(), S3Credentials.fromEnvironment())),
                    config.upstream().toString(), false);
        } else if (config.storeRoot() != null) {
            origin = new Origin(new FileObjectStore(config.storeRoot()), "folder " + config.storeRoot(), false);
        } else {
            Files.createDirectories(config.dataDir());
            e = EmbeddedStore.start(config.dataDir(), 0, CloudProfile.named(config.profile()));
            origin = new Origin(new S3ObjectStore(S3StoreConfig.endpoint(e.endpoint(), S3Credentials.PLACEHOLDER)),
                    "embedded store over " + config.dataDir() + " (profile " + config.profile() + ") at " + e.endpoint(), true);
        }
        this.embedded = e;
        TierStack.Builder tiers = TierStack.over(origin.store(), config.values(), config.cacheDir())
                .checkWrites(origin.folder() == null) // a folder store writes the bytes itself
                .sharedTier(config.sharedTier(), Duration.ofSeconds(60))
                .policy("planned", policy)
                // clients without a plan (awscli, boto3, any front-to-back reader): blocks ahead of sequential readers
                .readAhead(SequentialReadAhead.Config.DEFAULT, readAhead)
                .writeBack(config.writeBack());
        if (config.group() != null) {
            // members come and go (joinGroup): a client per member is made when it joins; hints ask last epoch's reader first
            tiers.group(url -> memberClient(config, url, 64, Map.of()), Duration.ofSeconds(5),
                    group -> new HintedStore(group, url -> memberClient(config, url, 16, Map.of(FerryHeaders.CACHED_ONLY, "1")),
                            config.blockSize(), block -> holders.apply(block)));
        }
        this.tiers = tiers.build();
        this.chain = this.tiers.chain();
        this.shared = this.tiers.shared();
        this.group = this.tiers.group();
        this.hinted = group == null ? null : (HintedStore) this.tiers.belowCache();
        this.belowCache = this.tiers.belowCache();
        this.cache = this.tiers.cache();
        this.writeBack = this.tiers.writeBack();
        this.metrics = FerryMetrics.bind(registry, chain.meter(), cache);
        this.localMultipart = writeBack == null ? null : new LocalMultipart(sibling("-multipart"));
        this.scratch = config.scratchBucket() == null ? null
                : new Scratch(sibling("-scratch"), config.scratchBucket(), config.scratchQuota(), config.scratchTtl());
        long sweep = Math.clamp(config.multipartTtl().toMillis() / 10, 1000, 3_600_000);
        ticker.scheduleWithFixedDelay(this::expireUploads, sweep, sweep, TimeUnit.MILLISECONDS);
        if (scratch != null) {
            long every = Math.clamp(config.scratchTtl().toMillis() / 10, 1000, 60_000);
            ticker.scheduleWithFixedDelay(this::sweepScratch, every, every, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Builds the node's tiers and starts its timers; close it to release them. {@code clock} is the one every
     * part of the node reads time from (its uptime, its counters' time, eviction's pace, prefetch, expiry);
     * {@code readAhead} runs the local tier's sequential read-ahead (the caller's: the node does not shut it down).
     */
    public static Node start(NodeConfig config, Clock clock, Executor readAhead) throws IOException {
        return new Node(config, clock, readAhead);
    }

    /** A folder beside the local tier's: {@code <cache-dir><suffix>}. */
    private Path sibling(String suffix) {
        return TierStack.sibling(config.cacheDir(), suffix);
    }

    /**
     * An S3 client of the group member at {@code url}, signing with this daemon's credentials when it has them;
     * short timeouts, so a member that does not answer is skipped.
     */
    private static ObjectStore memberClient(NodeConfig config, String url, int connections, Map<String, String> headers) {
        S3Credentials peers = S3Credentials.forPeer(config.accessKey(), config.secretKey());
        return new S3ObjectStore(new S3StoreConfig(URI.create(url), "us-east-1", true, peers.accessKeyId(), peers.secretAccessKey(),
                connections, Duration.ofSeconds(1), Duration.ofSeconds(10)), headers);
    }

    /**
     * Joins the regional group, once the daemon listens on {@code port}: follows its membership source (a
     * static list, DNS, etcd: this daemon registers where members register), applies each new member list to
     * the group with no restart, and probes the other members every {@code group-probe}. Nothing outside a group.
     */
    public void joinGroup(int port) throws IOException {
        if (group == null) {
            return;
        }
        membership = Membership.of(config.group(), config.groupRefresh());
        membership.start(SelfAddress.advertised(config.self(), config.bind(), port), members -> applyMembers(members, port));
        if (!config.groupProbe().isZero()) {
            prober = MemberProber.start(group, config.groupProbe());
        }
    }

    private void applyMembers(List<URI> members, int port) {
        URI self = SelfAddress.among(members, config.self(), config.bind(), port);
        List<ObjectStore> retired = group.update(members.stream().map(URI::toString).toList(), self == null ? null : self.toString());
        if (!retired.isEmpty()) {
            // a member that left may still be serving a stream this node reads: its client goes a minute later
            ticker.schedule(() -> retired.forEach(Node::closeQuietly), 60, TimeUnit.SECONDS);
        }
    }

    private static void closeQuietly(ObjectStore store) {
        try {
            store.close();
        } catch (IOException | RuntimeException e) {
            LOG.debug("closing a departed member's client: {}", e.toString());
        }
    }

    /** Where the group's members come from ({@code static}, {@code dns:...}, {@code etcd:...}), or null outside a group. */
    public String groupSource() {
        return membership == null ? null : membership.source();
    }

    /** Aborts the multipart uploads started longer than multipart-ttl ago, deleting their parts. */
    private void expireUploads() {
        Instant cutoff = clock.now().minus(config.multipartTtl());
        try {
            PendingUploads originUploads = origin.uploads();
            int n = (localMultipart == null ? 0 : localMultipart.expire(cutoff)) + (originUploads == null ? 0 : originUploads.expireUploads(cutoff));
            if (n > 0) {
                LOG.info("expired {} multipart uploads started more than {} ago", n, config.multipartTtl());
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot expire old multipart uploads: {}", e.getMessage());
        }
    }

    /** Deletes the scratch objects older than scratch-ttl. */
    private void sweepScratch() {
        try {
            scratch.sweep();
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot sweep the scratch bucket: {}", e.getMessage());
        }
    }

    /** Runs {@code task} once a second, on the node's status thread, until the node closes. */
    public void everySecond(Runnable task) {
        ticker.scheduleAtFixedRate(task, 1, 1, TimeUnit.SECONDS);
    }

    public NodeConfig config() {
        return config;
    }

    /** The store at the bottom of the stack. */
    public Origin origin() {
        return origin;
    }

    public double uptimeSeconds() {
        return (clock.nanoTime() - startNanos) / 1e9;
    }

    /** The regional group, or null. */
    public GroupStore group() {
        return group;
    }

    /** The group with hints, or null outside a group. */
    public HintedStore hinted() {
        return hinted;
    }

    /** The store right under the local tier: the group with hints, the shared tier, or the bounded chain. */
    public ObjectStore belowCache() {
        return belowCache;
    }

    public CachingStore cache() {
        return cache;
    }

    /** Write-back over the local tier, or null. */
    public WriteBackStore writeBack() {
        return writeBack;
    }

    /** Multipart uploads staged locally under write-back, or null. */
    public LocalMultipart localMultipart() {
        return localMultipart;
    }

    /** The scratch bucket, or null. */
    public Scratch scratch() {
        return scratch;
    }

    /** The top of the stack: what reads go to. */
    public ObjectStore reads() {
        return writeBack != null ? writeBack : cache;
    }

    public ServeStats stats() {
        return stats;
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The node's counters now. */
    public Counters counters() {
        return new Counters(chain.meter().snapshot(), cache.stats(), group == null ? null : group.stats(),
                shared == null ? null : shared.stats(), clock.nanoTime());
    }

    /** Bytes this node read from the node that read them last epoch (0 outside a group). */
    public long hintedBytes() {
        return hinted == null ? 0 : hinted.stats().bytes();
    }

    public double egressCostPerByte() {
        return ChainConfig.DEFAULT.prices().egressPerGb() / 1e9;
    }

    /**
     * Peer hints need a group whose members are, in order, the job's nodes, and this daemon among them: the
     * members now when they are (node {@code i} of the job is member {@code i}), else null.
     */
    public List<String> hintMembers(int jobNodes, int jobNode) {
        if (group == null) {
            return null;
        }
        List<String> members = group.members();
        String self = group.self();
        return self != null && members.size() == jobNodes && members.indexOf(self) == jobNode ? members : null;
    }

    /** Who read a block last epoch (a group member's URL, or null): the registered jobs' plans say. */
    public void holders(Function<BlockId, String> lookup) {
        this.holders = lookup;
    }

    /** The shards whose home is this node for {@code job} (empty: none); the group keeps them as owned. */
    public void homes(String job, Set<ObjectKey> homed) {
        if (group == null) {
            return;
        }
        if (homed.isEmpty()) {
            homes.remove(job);
        } else {
            homes.put(job, homed);
        }
        group.homes(key -> homes.values().stream().anyMatch(h -> h.contains(key)));
    }

    /**
     * A job's consumers reported progress ({@code replan}: it started an epoch, and {@code future} is its new
     * plan). Eviction follows every registered job's future, each job at its own position and pace
     * ({@link PlannedPolicy#plan(String, List, long)}); under {@code eviction-follows: last-report}, only the
     * future of the job that reported last.
     */
    public void follow(String job, List<BlockId> future, long blockPosition, boolean replan) {
        long now = clock.nanoTime();
        synchronized (policy) {
            if (config.evictionFollows().equals(NodeConfig.LAST_REPORT)) {
                if (replan || !job.equals(planOwner)) {
                    policy.plan(future);
                    planOwner = job;
                }
                policy.advanceTo(blockPosition);
                return;
            }
            if (replan || !policy.jobs().contains(job)) {
                policy.plan(job, future, now);
            }
            policy.advanceTo(job, blockPosition, now);
        }
    }

    /** The measured time per planned block of {@code job} (0 while unmeasured or under last-report). */
    public long nanosPerBlock(String job) {
        return policy.nanosPerBlock(job);
    }

    public void stepMetrics(int epoch, int samples, long waitNanos) {
        metrics.step(epoch, samples, waitNanos);
    }

    /**
     * A prefetcher for one job's epoch on this node: its planned blocks fetched into the local tier by time to
     * need, at most {@code prefetch-bytes} ahead of the job's position and {@link #prefetchThreads()} fetches
     * at a time. Null when prefetch is off ({@code prefetch-bytes} under a block).
     */
    public Prefetcher prefetcher(String name, List<BlockId> future) {
        long ahead = config.prefetchBytes() / config.blockSize();
        if (ahead < 1) {
            return null;
        }
        Prefetcher.Settings settings = Prefetcher.Settings.DEFAULT.withSlots(PREFETCH_THREADS)
                .withMaxAheadBlocks((int) Math.min(Integer.MAX_VALUE, ahead));
        return new Prefetcher(name, future, Prefetcher.Target.over(cache), settings, clock).start();
    }

    /** How many planned blocks a job fetches at a time. */
    public static int prefetchThreads() {
        return PREFETCH_THREADS;
    }

    /** Stops the timers and closes the stores, top down, and the embedded store. */
    @Override
    public void close() {
        if (prober != null) {
            prober.close();
        }
        if (membership != null) {
            membership.close(); // an etcd member withdraws at once
        }
        ticker.shutdownNow();
        try {
            try {
                tiers.close(); // write-back, the local tier, then the hints (their clients, the group's peers' clients) or the origin
            } finally {
                if (scratch != null) {
                    scratch.close();
                }
            }
        } catch (IOException e) {
            LOG.warn("closing the stores: {}", e.getMessage());
        }
        if (embedded != null) {
            embedded.close();
        }
        registry.close();
    }
}
