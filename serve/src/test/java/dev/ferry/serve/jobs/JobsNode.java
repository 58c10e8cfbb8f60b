package dev.ferry.serve.jobs;

import dev.ferry.metrics.FerryMetrics;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.plan.World;
import dev.ferry.serve.ServeConfig;
import dev.ferry.serve.node.Node;
import dev.ferry.store.ObjectKey;
import dev.ferry.time.ManualClock;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A real {@link Node} without its network front, over a folder store in a test's temporary folder, on a
 * {@link ManualClock}, with the {@link JobRegistry} the daemon would give it: what the jobs package runs on, built
 * the way {@code Daemon} builds it. Blocks of 4 KiB, a 64 MiB tier, prefetch off unless a test turns it on.
 * {@link #manifest} writes shards into the store's bucket {@code data} and names them with their real ETags.
 */
final class JobsNode implements AutoCloseable {
    static final int BLOCK = 4096;
    /** The shards of {@link #manifest}: 8 of 16 KiB (4 blocks), 16 samples of 1 KiB each, 128 samples in all. */
    static final int SHARDS = 8;
    static final int SHARD_BYTES = 4 * BLOCK;
    static final int SAMPLES_PER_SHARD = 16;

    final ManualClock clock = new ManualClock();
    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    final Path root;
    final Node node;
    final FerryMetrics steps;
    final JobRegistry jobs;
    private final ExecutorService readAhead = Executors.newVirtualThreadPerTaskExecutor();
    private Manifest manifest;

    private JobsNode(Path dir, Map<String, String> settings) throws IOException {
        this.root = dir.resolve("store");
        Files.createDirectories(root.resolve("data"));
        Map<String, String> all = new HashMap<>(Map.of("store-root", root.toString(), "cache-dir", dir.resolve("cache").toString(),
                "data-dir", dir.resolve("upstream").toString(), "cache-size", "64MiB", "block-size", "4KiB", "prefetch-bytes", "0"));
        all.putAll(settings);
        ServeConfig config = ServeConfig.defaults().with(all);
        config.validate();
        this.node = Node.start(config, clock, readAhead);
        this.steps = FerryMetrics.bind(registry, node.stack().meter(), node.stack().cache());
        this.jobs = new JobRegistry(node, registry, steps, clock);
    }

    /** A node over {@code dir/store} with its tier in {@code dir/cache}; {@code settings} override the defaults above. */
    static JobsNode start(Path dir, Map<String, String> settings) throws IOException {
        return new JobsNode(dir, settings);
    }

    static JobsNode start(Path dir) throws IOException {
        return start(dir, Map.of());
    }

    /** The manifest of {@link #SHARDS} shards written into the store (the same one on every call). */
    Manifest manifest() throws IOException {
        if (manifest == null) {
            Random random = new Random(21);
            List<Shard> shards = new ArrayList<>();
            for (int i = 0; i < SHARDS; i++) {
                byte[] bytes = new byte[SHARD_BYTES];
                random.nextBytes(bytes);
                Files.write(root.resolve("data/shard-" + i + ".bin"), bytes);
                ObjectKey key = ObjectKey.of("data", "shard-" + i + ".bin");
                shards.add(new Shard(key, SHARD_BYTES, node.stack().cache().head(key).etag(), SAMPLES_PER_SHARD));
            }
            manifest = new Manifest(shards);
        }
        return manifest;
    }

    /** Writes {@link #manifest} into the store as {@code data/manifest.json}, for a registration's {@code manifest_key}. */
    void manifestInStore() throws IOException {
        ManifestJson.write(manifest(), "test", root.resolve("data/manifest.json"));
    }

    /** A job over {@link #manifest} by the global plan with {@code seed}, on one node of four ranks, batches of 4. */
    Job job(String name, long seed) throws IOException {
        return job(name, PlanConfig.DEFAULT.withSeed(seed), new World(1, 4, 1), 0);
    }

    /** A job over {@link #manifest} that is node {@code node} of {@code world}, batches of 4. */
    Job job(String name, PlanConfig plan, World world, int node) throws IOException {
        return Job.planned(name, manifest(), plan, world, node, 4);
    }

    /** A running job as the registry would start it (in its first epoch), on this node's history and clock. */
    RunningJob run(Job job) {
        RunningJob run = new RunningJob(job, node, steps, jobs.history(), clock, ClientGone.NEVER);
        run.startEpoch(job.firstEpoch());
        return run;
    }

    @Override
    public void close() {
        jobs.stopAll();
        node.close();
        readAhead.shutdownNow();
        registry.close();
    }
}
