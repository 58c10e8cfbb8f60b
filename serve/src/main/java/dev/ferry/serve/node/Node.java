package dev.ferry.serve.node;

import dev.ferry.cache.BlockId;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.SequentialReadAhead;
import dev.ferry.cache.policy.PlannedPolicy;
import dev.ferry.decoded.DecodedSamples;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3client.S3Credentials;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.serve.protocol.FerryHeaders;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PendingUploads;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.store.shared.GroupStore;
import dev.ferry.store.shared.SharedTierStore;
import dev.ferry.tier.TierSettings;
import dev.ferry.tier.TierStack;
import dev.ferry.time.Clock;
import dev.ferry.writeback.Scratch;
import dev.ferry.writeback.WriteBackStore;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node of {@code ferry serve}, without its network front: the tier stack built from the config by
 * {@link TierStack} (as {@code ferry mount} builds its own), in the order a read goes down it, and what runs
 * beside it (the regional group's membership, eviction and prefetch by plan, the status and expiry timers).
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
 * A port with a few views, for the layers above: {@link #stack()} (the stores, for the S3 semantics and the status),
 * {@link #counters()}, {@link #group()} (the regional group), and {@link #plans()}, through which whoever plans the
 * reads steers eviction and prefetch; the one question the node asks back, who read a block last epoch, is
 * {@link BlockHolders}. It knows nothing of what plans the reads. Thread-safe.
 */
public final class Node implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Node.class);

    private final NodeConfig config;
    private final Clock clock;
    private final long startNanos;
    private final EmbeddedStore embedded;
    private final TierStack stack;
    private final NodeStack tiers;
    private final RegionalGroup group;
    private final PlannedTier plans;
    /** Decoded samples beside the local tier, sharing its capacity; null without a tier or with {@code decoded off}. */
    private final DecodedSamples decoded;
    private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ferry-status");
        t.setDaemon(true);
        return t;
    });

    private Node(NodeConfig config, Clock clock, Executor readAhead) throws IOException {
        this.config = config;
        this.clock = clock;
        this.startNanos = clock.nanoTime();
        EmbeddedStore e = null;
        Origin origin;
        if (config.upstream() != null) {
            origin = new Origin(new S3ObjectStore(S3StoreConfig.endpoint(config.upstream(), S3Credentials.fromEnvironment())
                    .withSocketTimeout(TierSettings.socketTimeout(config.values()))),
                    dev.ferry.util.Secrets.shown(config.upstream()), false);
        } else if (config.storeRoot() != null) {
            origin = new Origin(new FileObjectStore(config.storeRoot()), "folder " + config.storeRoot(), false);
        } else {
            Files.createDirectories(config.dataDir());
            e = EmbeddedStore.start(config.dataDir(), 0, CloudProfile.named(config.profile()));
            origin = new Origin(new S3ObjectStore(S3StoreConfig.endpoint(e.endpoint(), S3Credentials.PLACEHOLDER)
                    .withSocketTimeout(TierSettings.socketTimeout(config.values()))),
                    "embedded store over " + config.dataDir() + " (profile " + config.profile() + ") at " + e.endpoint(), true);
        }
        this.embedded = e;
        ChainConfig chain = ChainConfig.DEFAULT;
        PlannedPolicy<BlockId> policy = new PlannedPolicy<>();
        TierStack.Builder builder = TierStack.over(origin.store(), config.values(), config.cacheDir())
                .chain(chain)
                .clock(clock)
                .checkWrites(origin.folder() == null) // a folder store writes the bytes itself
                .sharedTier(config.sharedTier(), Duration.ofSeconds(60))
                .policy("planned", policy)
                // clients without a plan (awscli, boto3, any front-to-back reader): blocks ahead of sequential readers
                .readAhead(SequentialReadAhead.Config.DEFAULT, readAhead)
                // a plan (and its node partitions) decides what this node fetches: no folder is read ahead beside it
                .foldersPausedWhile(() -> !policy.jobs().isEmpty())
                .writeBack(config.writeBack());
        if (config.group() != null) {
            // members come and go (joinGroup): a client per member is made when it joins; hints ask last epoch's reader first
            builder.group(url -> memberClient(config, url, 64, Map.of()), Duration.ofSeconds(5),
                    group -> new HintedStore(group, url -> memberClient(config, url, 16, Map.of(FerryHeaders.CACHED_ONLY, "1")),
                            config.blockSize()));
        }
        try {
            this.stack = builder.build();
        } catch (IOException | RuntimeException failure) {
            // nothing is served: what was started for it goes (the embedded store's port and threads)
            try {
                origin.store().close();
            } catch (IOException | RuntimeException closing) {
                failure.addSuppressed(closing);
            }
            if (e != null) {
                e.close();
            }
            throw failure;
        }
        WriteBackStore writeBack = stack.writeBack();
        Scratch scratch = config.scratchBucket() == null ? null
                : new Scratch(sibling("-scratch"), config.scratchBucket(), config.scratchQuota(), config.scratchTtl(), clock);
        this.tiers = new NodeStack(origin, stack.chain().meter(), stack.chain().governor(), chain.prices(), stack.door(scratch), stack.cache(),
                writeBack, writeBack == null ? null : new LocalMultipart(sibling("-multipart")));
        this.group = stack.group() == null ? null : new RegionalGroup(stack.group(), (HintedStore) stack.belowCache(), config, ticker);
        this.plans = new PlannedTier(policy, stack.cache(), config, clock);
        CachingStore tier = stack.cache();
        // nothing is lent until a share is chosen (auto) or set: the blocks keep the whole tier meanwhile
        this.decoded = tier == null || tier.isPassThrough() || config.decodedShare() == 0 ? null
                : new DecodedSamples(sibling("-decoded"), 0);
        long sweep = Math.clamp(config.multipartTtl().toMillis() / 10, 1000, 3_600_000);
        ticker.scheduleWithFixedDelay(this::expireUploads, sweep, sweep, TimeUnit.MILLISECONDS);
        if (tiers.scratch() != null) {
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
        if (group != null) {
            group.join(port);
        }
    }

    /** Aborts the multipart uploads started longer than multipart-ttl ago, deleting their parts. */
    private void expireUploads() {
        Instant cutoff = clock.now().minus(config.multipartTtl());
        try {
            PendingUploads originUploads = tiers.origin().uploads();
            LocalMultipart local = tiers.localMultipart();
            int n = (local == null ? 0 : local.expire(cutoff)) + (originUploads == null ? 0 : originUploads.expireUploads(cutoff));
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
            tiers.scratch().sweep();
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

    /** The stores, as built. */
    public NodeStack stack() {
        return tiers;
    }

    /** The decoded samples kept beside the local tier (docs/decoded-cache.md), or null when there are none. */
    public DecodedSamples decoded() {
        return decoded;
    }

    /** The regional group this node takes part in, or null outside a group. */
    public RegionalGroup group() {
        return group;
    }

    /** Where plans steer eviction and prefetch. */
    public PlanSink plans() {
        return plans;
    }

    /** The node's counters now. */
    public Counters counters() {
        GroupStore peers = stack.group();
        SharedTierStore shared = stack.shared();
        return new Counters(tiers.meter().snapshot(), tiers.cache().stats(), peers == null ? null : peers.stats(),
                group == null ? null : group.hintStats(), shared == null ? null : shared.stats(), clock.nanoTime());
    }

    public double uptimeSeconds() {
        return (clock.nanoTime() - startNanos) / 1e9;
    }

    /** Leaves the group, stops the timers and closes the stores, top down, and the embedded store. */
    @Override
    public void close() {
        if (group != null) {
            group.leave(); // an etcd member withdraws at once
        }
        ticker.shutdownNow();
        try {
            try {
                stack.close(); // write-back, the local tier, then the hints (their clients, the group's peers' clients) or the origin
            } finally {
                if (tiers.scratch() != null) {
                    tiers.scratch().close();
                }
            }
        } catch (IOException e) {
            LOG.warn("closing the stores: {}", e.getMessage());
        }
        if (embedded != null) {
            embedded.close();
        }
    }
}
