package dev.ferry.serve;

import dev.ferry.metrics.FerryMetrics;
import dev.ferry.serve.front.S3Server;
import dev.ferry.serve.front.ServeContext;
import dev.ferry.serve.front.ServeStats;
import dev.ferry.serve.front.SpoolFolder;
import dev.ferry.serve.node.PeerLevel;
import dev.ferry.serve.jobs.ControlApi;
import dev.ferry.serve.jobs.JobRegistry;
import dev.ferry.serve.jobs.ServeSnapshot;
import dev.ferry.serve.node.Node;
import dev.ferry.serve.node.NodeStack;
import dev.ferry.serve.protocol.SigV4;
import dev.ferry.serve.protocol.VirtualHosts;
import dev.ferry.serve.s3.S3Service;
import dev.ferry.time.Clock;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code ferry serve}, composed: the {@link Node} (the object store, the chain in front of it, the shared
 * tier, the regional group, the local tier with a plan-aware policy, optional write-back), the jobs
 * registered on it ({@link JobRegistry}, each with a prefetcher that keeps the next {@code prefetch-bytes}
 * of this node's planned block reads on local disk), and the Netty front ({@link S3Server}) that serves S3
 * ({@link S3Service}) and ferry's control API ({@link ControlApi}). The daemon's one clock, one executor and
 * one meter registry are made here and handed to each. Nothing calls back into this class.
 */
public final class Daemon implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Daemon.class);

    private final ServeConfig config;
    private final Node node;
    private final JobRegistry jobs;
    private final S3Server server;
    private final PeerLevel peers;
    /** Request handling and the local tier's sequential read-ahead, on virtual threads. */
    private final ExecutorService workers;
    /** The node's, the jobs' and the consumers' meters, scraped at {@code /_ferry/metrics}. */
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ServeStats served = new ServeStats();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** {@code clock}: the one clock of the daemon; its node, jobs and front read time from it. */
    private Daemon(ServeConfig config, Clock clock) throws IOException {
        config.validate();
        Objects.requireNonNull(clock, "clock is null");
        this.config = config;
        this.workers = Executors.newVirtualThreadPerTaskExecutor();
        Node started = null;
        try {
            started = Node.start(config, clock, workers);
            this.node = started;
            NodeStack tiers = node.stack();
            // the tiers' meters, and the loader's, which the jobs' consumers' reports feed
            FerryMetrics metrics = FerryMetrics.bind(registry, tiers.meter(), tiers.cache());
            this.jobs = new JobRegistry(node, registry, metrics, clock);
            if (node.group() != null) {
                node.group().hintsFrom(jobs); // who read a block last epoch: the registered jobs' plans say
            }
            Path spool = SpoolFolder.prepare(config.cacheDir());
            SigV4 sig = config.accessKey() == null ? null : new SigV4(config.accessKey(), config.secretKey());
            ServeContext.Limits limits = new ServeContext.Limits(config.maxHeaderBytes(), config.maxXmlBytes(), config.maxObjectBytes());
            PeerLevel peers = new PeerLevel(tiers.writeBack(), node.group(), clock, config.peerGrace(), workers);
            this.peers = peers;
            ServeContext context = new ServeContext(S3Service.over(tiers, spool, limits.maxObjectBytes(), clock, peers),
                    new ControlApi(node, jobs, registry, served::snapshot, this::endpoint, peers), sig, spool, limits, workers, served,
                    new VirtualHosts(config.virtualHosts()), clock);
            this.server = S3Server.start(config.bind(), config.port(), config.headerTimeout(), context);
            try {
                node.joinGroup(server.port());
            } catch (IOException | RuntimeException e) {
                server.close();
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            workers.shutdownNow();
            if (started != null) {
                started.close();
            }
            registry.close();
            throw e;
        }
        node.everySecond(jobs::sample);
        node.everySecond(peers::watch);
        if (!ServeConfig.isLoopback(config.bind()) && config.accessKey() == null) {
            LOG.warn("*** INSECURE: ferry serve listens on {} without credentials: anyone who can reach this port can read and "
                    + "write through it ***", config.bind());
        }
    }

    /** Starts the daemon on the real clock; it listens when this returns. */
    public static Daemon start(ServeConfig config) throws IOException {
        return start(config, Clock.system());
    }

    /**
     * As {@link #start(ServeConfig)}, reading time from {@code clock}: what the metadata TTL, the jobs' pacing and the
     * front measure. A test of what a TTL does passes a clock it advances itself.
     */
    public static Daemon start(ServeConfig config, Clock clock) throws IOException {
        return new Daemon(config, clock);
    }

    public int port() {
        return server.port();
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

    /** The node: its tiers, counters, group and plans. */
    public Node node() {
        return node;
    }

    /** What the front has served so far: requests, errors, bytes by path, latency. */
    public ServeSnapshot served() {
        return served.snapshot();
    }

    /** The jobs registered on this daemon (what {@code /_ferry/v1/jobs} registers into). */
    public JobRegistry jobs() {
        return jobs;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        jobs.stopAll();
        server.close();
        workers.shutdownNow();
        node.close();
        peers.close();
        registry.close();
    }
}
