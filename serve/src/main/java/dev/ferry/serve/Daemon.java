package dev.ferry.serve;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CacheStats;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.SequentialReadAhead;
import dev.ferry.cache.policy.PlannedPolicy;
import dev.ferry.cache.policy.PreferringPolicy;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.metrics.FerryMetrics;
import dev.ferry.s3.S3Credentials;
import dev.ferry.s3.S3ObjectStore;
import dev.ferry.s3.S3StoreConfig;
import dev.ferry.plan.Prefetcher;
import dev.ferry.store.BucketOperations;
import dev.ferry.store.FileObjectStore;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PendingUploads;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.FirstByteTimeoutStore;
import dev.ferry.store.chain.MeterSnapshot;
import dev.ferry.store.chain.StoreChain;
import dev.ferry.store.tier.GroupStore;
import dev.ferry.store.tier.Rendezvous;
import dev.ferry.store.tier.SharedTierStore;
import dev.ferry.time.Clock;
import dev.ferry.writeback.Scratch;
import dev.ferry.writeback.WriteBackConfig;
import dev.ferry.writeback.WriteBackStore;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code ferry serve}: the object store (S3, a folder, or the embedded store), the chain in front of it
 * (retry, governor, meter), the local tier with a plan-aware policy, optional write-back, and the Netty
 * endpoint. Jobs register plans here; each gets a prefetcher that keeps the next {@code prefetch-bytes}
 * of this node's planned block reads on local disk, ahead of the position its consumers report.
 */
public final class Daemon implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Daemon.class);
    private static final int PREFETCH_THREADS = 8;

    /** Daemon-wide counters at one moment: where an epoch's egress and hit rate are measured from. */
    public record Counters(MeterSnapshot meter, CacheStats cache, GroupStore.GroupStats peers, SharedTierStore.SharedStats shared, long nanos) {
        long sharedBytes() {
            return shared == null ? 0 : shared.bytesFromTier();
        }

        public long peerBytes() {
            return peers == null ? 0 : peers.peerBytes();
        }
    }

    private final ServeConfig config;
    private final EmbeddedStore embedded;
    private final ObjectStore origin;
    private final StoreChain chain;
    private final GroupStore group;
    private final SharedTierStore shared;
    private final HintedStore hinted;
    private final PlannedPolicy<BlockId> policy = new PlannedPolicy<>();
    private final CachingStore cache;
    private final WriteBackStore writeBack;
    private final LocalMultipart localMultipart;
    private final Scratch scratch;
    private final PendingUploads originUploads;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final FerryMetrics metrics;
    private final ServeStats stats = new ServeStats();
    private final Map<String, RunningJob> jobs = new ConcurrentHashMap<>();
    private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ferry-status");
        t.setDaemon(true);
        return t;
    });
    private final History history = new History(300);
    private final long startNanos = System.nanoTime();
    private final EventLoopGroup boss;
    private final EventLoopGroup io;
    private final Channel server;
    private final String upstreamDescription;
    private volatile String planOwner;

    private Daemon(ServeConfig config) throws IOException {
        config.validate();
        this.config = config;
        EmbeddedStore e = null;
        ObjectStore o;
        BucketOperations buckets;
        if (config.upstream() != null) {
            S3ObjectStore store = new S3ObjectStore(S3StoreConfig.endpoint(config.upstream(), S3Credentials.fromEnvironment()));
            o = store;
            buckets = store;
            upstreamDescription = config.upstream().toString();
        } else if (config.storeRoot() != null) {
            FileObjectStore store = new FileObjectStore(config.storeRoot());
            o = store;
            buckets = store;
            upstreamDescription = "folder " + config.storeRoot();
        } else {
            Files.createDirectories(config.dataDir());
            e = EmbeddedStore.start(config.dataDir(), 0, CloudProfile.named(config.profile()));
            S3ObjectStore store = new S3ObjectStore(S3StoreConfig.endpoint(e.endpoint(), S3Credentials.PLACEHOLDER));
            o = store;
            buckets = store;
            upstreamDescription = "embedded store over " + config.dataDir() + " (profile " + config.profile() + ") at " + e.endpoint();
        }
        this.embedded = e;
        this.origin = o;
        this.chain = StoreChain.over(origin, ChainConfig.DEFAULT);
        CacheConfig cc = CacheConfig.of(config.cacheDir(), config.cacheSize());
        cc = new CacheConfig(cc.dir(), cc.capacity(), config.blockSize(), cc.highWatermark(), cc.lowWatermark(), cc.verify(),
                cc.metadataTtl(), cc.maxRunBlocks(), "planned");
        // an origin that accepts connections and never answers costs a reader first-byte-timeout, retries included
        ObjectStore bounded = new FirstByteTimeoutStore(chain, config.firstByteTimeout());
        this.shared = config.sharedTier() == null ? null
                : new SharedTierStore(bounded, config.sharedTier(), Duration.ofSeconds(60));
        ObjectStore below = shared != null ? shared : bounded; // local tier -> regional group -> shared file system -> origin
        this.group = config.group().isEmpty() ? null : group(config, below);
        this.hinted = group == null ? null : new HintedStore(group, cachedOnlyClients(config), config.blockSize(), this::holderOf);
        this.cache = group == null ? new CachingStore(below, cc, policy, Clock.system())
                : new CachingStore(hinted, cc, new PreferringPolicy<>(policy, id -> group.owns(id.key())), Clock.system());
        // clients without a plan (awscli, boto3, any front-to-back reader): blocks ahead of sequential readers
        SequentialReadAhead.attach(cache, SequentialReadAhead.Config.DEFAULT, workers);
        this.writeBack = config.writeBack()
                ? new WriteBackStore(cache, WriteBackConfig.of(config.cacheDir().resolveSibling(config.cacheDir().getFileName() + "-writeback"),
                        config.writeBackQuota()))
                : null;
        this.metrics = FerryMetrics.bind(registry, chain.meter(), cache);
        Path spool = config.cacheDir().resolve("spool");
        clearSpool(spool);
        SigV4 sig = config.accessKey() == null ? null : new SigV4(config.accessKey(), config.secretKey());
        ServeContext.Limits limits = new ServeContext.Limits(config.maxHeaderBytes(), config.maxXmlBytes(), config.maxObjectBytes());
        this.localMultipart = writeBack == null ? null
                : new LocalMultipart(config.cacheDir().resolveSibling(config.cacheDir().getFileName() + "-multipart"));
        ObjectStore checked = group == null ? below : hinted;
        WriteChecks checks = writeBack == null ? null
                : new WriteChecks(checked, origin instanceof FileObjectStore folder ? folder : null, writeBack,
                        Duration.ofSeconds(30));
        this.originUploads = origin instanceof PendingUploads p ? p : null;
        this.scratch = config.scratchBucket() == null ? null
                : new Scratch(config.cacheDir().resolveSibling(config.cacheDir().getFileName() + "-scratch"),
                        config.scratchBucket(), config.scratchQuota(), config.scratchTtl());
        // under write-back the origin's uploads in progress are write-back's own: clients list the uploads they started
        ServeContext context = new ServeContext(new S3Service(cache, checked, buckets, writeBack, localMultipart, checks,
                writeBack == null ? originUploads : null, spool, limits.maxObjectBytes(), scratch),
                new FerryApi(this), sig, spool, limits, workers, stats, new VirtualHosts(config.virtualHosts()));
        boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        io = new MultiThreadIoEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()), NioIoHandler.newFactory());
        try {
            ServerBootstrap b = new ServerBootstrap().group(boss, io).channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(512 * 1024, 2 * 1024 * 1024))
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            HeaderTimeout headerTimeout = new HeaderTimeout(config.headerTimeout());
                            ch.pipeline().addLast(new IdleStateHandler(0, 0, 120, TimeUnit.SECONDS));
                            ch.pipeline().addLast(headerTimeout.bytes());
                            ch.pipeline().addLast(new HttpServerCodec(new HttpDecoderConfig()
                                    .setMaxInitialLineLength(limits.maxHeaderBytes()).setMaxHeaderSize(limits.maxHeaderBytes())
                                    .setMaxChunkSize(256 * 1024)));
                            ch.pipeline().addLast(headerTimeout.requests());
                            ch.pipeline().addLast(new S3Handler(context));
                        }
                    });
            server = b.bind(new InetSocketAddress(config.bind(), config.port())).sync().channel();
        } catch (Exception ex) {
            closeQuietly();
            throw new IOException("cannot listen on " + config.bind() + ":" + config.port() + ": " + ex.getMessage(), ex);
        }
        ticker.scheduleAtFixedRate(this::sample, 1, 1, TimeUnit.SECONDS);
        long sweep = Math.clamp(config.multipartTtl().toMillis() / 10, 1000, 3_600_000);
        ticker.scheduleWithFixedDelay(this::expireUploads, sweep, sweep, TimeUnit.MILLISECONDS);
        if (scratch != null) {
            long every = Math.clamp(config.scratchTtl().toMillis() / 10, 1000, 60_000);
            ticker.scheduleWithFixedDelay(this::sweepScratch, every, every, TimeUnit.MILLISECONDS);
        }
        if (!ServeConfig.isLoopback(config.bind()) && sig == null) {
            LOG.warn("*** INSECURE: ferry serve listens on {} without credentials: anyone who can reach this port can read and "
                    + "write through it ***", config.bind());
        }
    }

    /** Aborts the multipart uploads started longer than multipart-ttl ago, deleting their parts. */
    private void expireUploads() {
        Instant cutoff = Instant.now().minus(config.multipartTtl());
        try {
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

    /** The scratch bucket, or null. */
    Scratch scratch() {
        return scratch;
    }

    /** Starts the daemon; it listens when this returns. */
    public static Daemon start(ServeConfig config) throws IOException {
        return new Daemon(config);
    }

    private static void clearSpool(Path spool) throws IOException {
        Files.createDirectories(spool);
        try (Stream<Path> s = Files.list(spool)) {
            for (Path p : s.toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    public URI endpoint() {
        String host = config.bind().contains(":") ? "[" + config.bind() + "]" : config.bind();
        if (host.equals("0.0.0.0")) {
            host = "127.0.0.1";
        }
        return URI.create("http://" + host + ":" + port());
    }

    public ServeConfig config() {
        return config;
    }

    String upstreamDescription() {
        return upstreamDescription;
    }

    CachingStore cache() {
        return cache;
    }

    WriteBackStore writeBack() {
        return writeBack;
    }

    StoreChain chain() {
        return chain;
    }

    ServeStats stats() {
        return stats;
    }

    PrometheusMeterRegistry registry() {
        return registry;
    }

    History history() {
        return history;
    }

    double uptimeSeconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /** The daemon-wide counters now. */
    public Counters counters() {
        return new Counters(chain.meter().snapshot(), cache.stats(), group == null ? null : group.stats(),
                shared == null ? null : shared.stats(), System.nanoTime());
    }

    GroupStore group() {
        return group;
    }

    /** Per registered job with the node partition: the shards whose home is this node (read here, kept as owned). */
    private final Map<String, Set<ObjectKey>> homes = new ConcurrentHashMap<>();

    /** Peer hints need a group whose members are, in order, the job's nodes, and this daemon among them. */
    boolean hintsApply(Job job) {
        return group != null && config.self() != null && job.nodes() == config.group().size()
                && config.group().indexOf(config.self()) == job.node();
    }

    /** The group member that read {@code block} last epoch by a registered job's plan, or -1. */
    int holderOf(BlockId block) {
        for (RunningJob run : jobs.values()) {
            int m = run.holderOf(block);
            if (m >= 0) {
                return m;
            }
        }
        return -1;
    }

    /** A client per other member that asks for blocks that member holds on disk, and nothing else. */
    private static List<ObjectStore> cachedOnlyClients(ServeConfig config) {
        return memberClients(config, null, 16, Map.of(S3Service.CACHED_ONLY, "1"));
    }

    HintedStore hinted() {
        return hinted;
    }

    /** Bytes this daemon read from the node that read them last epoch (0 outside a group). */
    public long hintedBytes() {
        return hinted == null ? 0 : hinted.stats().bytes();
    }

    private static GroupStore group(ServeConfig config, ObjectStore origin) {
        Rendezvous ring = new Rendezvous(config.group().stream().map(URI::toString).toList());
        int self = config.self() == null ? -1 : config.group().indexOf(config.self());
        return new GroupStore(ring, self, memberClients(config, origin, 64, Map.of()), origin, Duration.ofSeconds(5));
    }

    /**
     * An S3 client per group member, in the group's order, signing with this daemon's credentials when it has
     * them; short timeouts, so a member that does not answer is skipped. This daemon's own slot holds
     * {@code self}.
     */
    private static List<ObjectStore> memberClients(ServeConfig config, ObjectStore self, int connections, Map<String, String> headers) {
        S3Credentials peers = S3Credentials.forPeer(config.accessKey(), config.secretKey());
        List<ObjectStore> out = new ArrayList<>();
        for (URI member : config.group()) {
            out.add(member.equals(config.self()) ? self : new S3ObjectStore(new S3StoreConfig(member, "us-east-1", true, peers.accessKeyId(), peers.secretAccessKey(),
                    connections, Duration.ofSeconds(1), Duration.ofSeconds(10)), headers));
        }
        return out;
    }

    Map<String, RunningJob> jobs() {
        return jobs;
    }

    ObjectStore reads() {
        return writeBack != null ? writeBack : cache;
    }

    /** Registers (or replaces) a job; eviction follows its plan along with the other jobs'. */
    public RunningJob register(Job job) {
        RunningJob run = new RunningJob(job, this);
        RunningJob old = jobs.put(job.name, run);
        if (old != null) {
            old.stop();
        }
        if (group != null) {
            Set<ObjectKey> homed = job.homedShards();
            if (homed.isEmpty()) {
                homes.remove(job.name);
            } else {
                homes.put(job.name, homed);
            }
            group.homes(key -> homes.values().stream().anyMatch(h -> h.contains(key)));
        }
        run.startEpoch(1);
        jobGauges(run);
        return run;
    }

    /**
     * A job's consumers reported progress ({@code replan}: it started an epoch, and {@code future} is its new
     * plan). Eviction follows every registered job's future, each job at its own position and pace
     * ({@link PlannedPolicy#plan(String, List, long)}); under {@code eviction-follows: last-report}, only the
     * future of the job that reported last.
     */
    void follow(RunningJob run, List<BlockId> future, long blockPosition, boolean replan) {
        String name = run.job.name;
        long now = System.nanoTime();
        synchronized (policy) {
            if (config.evictionFollows().equals(ServeConfig.LAST_REPORT)) {
                if (replan || !name.equals(planOwner)) {
                    policy.plan(future);
                    planOwner = name;
                }
                policy.advanceTo(blockPosition);
                return;
            }
            if (replan || !policy.jobs().contains(name)) {
                policy.plan(name, future, now);
            }
            policy.advanceTo(name, blockPosition, now);
        }
    }

    /** The measured time per planned block of {@code job} (0 while unmeasured or under last-report). */
    long nanosPerBlock(String job) {
        return policy.nanosPerBlock(job);
    }

    void stepMetrics(int epoch, int samples, long waitNanos) {
        metrics.step(epoch, samples, waitNanos);
    }

    /**
     * A prefetcher for one job's epoch on this node: its planned blocks fetched into the local tier by time to
     * need, at most {@code prefetch-bytes} ahead of the job's position and {@link #prefetchThreads()} fetches
     * at a time. Null when prefetch is off ({@code prefetch-bytes} under a block).
     */
    Prefetcher prefetcher(String name, List<BlockId> future) {
        long ahead = config.prefetchBytes() / config.blockSize();
        if (ahead < 1) {
            return null;
        }
        Prefetcher.Settings settings = Prefetcher.Settings.DEFAULT.withSlots(PREFETCH_THREADS)
                .withMaxAheadBlocks((int) Math.min(Integer.MAX_VALUE, ahead));
        return new Prefetcher(name, future, new Prefetcher.Target() {
            @Override
            public boolean residentOrInFlight(BlockId block) {
                return cache.residentOrInFlight(block);
            }

            @Override
            public long fetch(BlockId block) throws IOException {
                return cache.prefetch(block);
            }
        }, settings, Clock.system()).start();
    }

    static int prefetchThreads() {
        return PREFETCH_THREADS;
    }

    private void sample() {
        try {
            List<RunningJob> runs = new ArrayList<>(jobs.values());
            Counters now = counters();
            history.sample(now, runs);
            for (RunningJob run : runs) {
                run.advice.refresh(run, now, egressCostPerByte());
                jobGauges(run);
            }
        } catch (RuntimeException e) {
            LOG.debug("status sample failed: {}", e.toString());
        }
    }

    double egressCostPerByte() {
        return ChainConfig.DEFAULT.prices().egressPerGb() / 1e9;
    }

    /** Per job on /metrics: the current epoch's predicted and measured egress and the advisor's finding count. */
    private final Map<String, AtomicLong[]> jobGauges = new ConcurrentHashMap<>();

    private void jobGauges(RunningJob run) {
        AtomicLong[] g = jobGauges.computeIfAbsent(run.job.name, name -> {
            AtomicLong[] values = {new AtomicLong(-1),
                    new AtomicLong(), new AtomicLong()};
            Gauge.builder("ferry.job.predicted.egress", values[0], AtomicLong::get)
                    .tag("job", name).baseUnit("bytes").description("egress the job's plan predicts for its current epoch on this node")
                    .register(registry);
            Gauge.builder("ferry.job.egress", values[1], AtomicLong::get)
                    .tag("job", name).baseUnit("bytes").description("egress measured in the job's current epoch").register(registry);
            Gauge.builder("ferry.job.findings", values[2], AtomicLong::get)
                    .tag("job", name).description("the advisor's findings for the job (the projection of its egress not counted)")
                    .register(registry);
            return values;
        });
        Job.Epoch cur = run.current();
        g[0].set(run.advice.predictedEgress(cur.number));
        Counters end = cur.atEnd != null ? cur.atEnd : counters();
        g[1].set(end.meter().egressBytes() - cur.atStart.meter().egressBytes());
        g[2].set(run.advice.findings().stream().filter(f -> !f.startsWith("Projected egress")).count());
    }

    private final AtomicBoolean closed = new AtomicBoolean();

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        jobs.values().forEach(RunningJob::stop);
        if (server != null) {
            server.close().syncUninterruptibly();
        }
        closeQuietly();
    }

    private void closeQuietly() {
        ticker.shutdownNow();
        if (boss != null) {
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (io != null) {
            io.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        workers.shutdownNow();
        try {
            if (writeBack != null) {
                writeBack.close();
            }
            cache.close();
            if (scratch != null) {
                scratch.close();
            }
            if (hinted != null) {
                hinted.close(); // closes the hint clients, the group's peers' clients and the origin
            } else {
                origin.close();
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
