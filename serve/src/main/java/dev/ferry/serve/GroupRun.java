package dev.ferry.serve;

import dev.ferry.loader.SyntheticDataset;
import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.store.FileObjectStore;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A regional group for real, on one machine: {@code nodes} daemons on loopback ports over one folder as
 * the origin, each in the group of all, and one consumer per node reading its share of each epoch's plan
 * (node {@code n} takes positions {@code n, n + N, ...}) through its own daemon with ranged GETs pinned to
 * the manifest's ETags. Optionally one daemon is closed halfway through an epoch (its consumer stops with
 * it; the others must not see a failed read). Measures, per epoch, what the daemons counted: origin egress,
 * bytes served by peers, cache hits and misses. Used by {@code ferry bench group} and the group test.
 */
public final class GroupRun {
    /** What to run; {@code killNode} is -1 for no kill. Samples are {@code sampleBytes} to twice that. */
    /**
     * {@code plans}: every daemon gets the job's plan (world of {@code nodes} nodes, its own node number) and
     * a progress report as each epoch starts, so it can ask last epoch's reader of a block first (peer hints).
     */
    public record Setup(int nodes, int shards, int samplesPerShard, int sampleBytes, long cachePerNode, int blockSize, int epochs,
            long seed, int killNode, int killEpoch, boolean plans) {
    }

    /** One epoch of the whole group. */
    public record Epoch(int epoch, long samples, long failedReads, long egressBytes, long peerBytes, long hintedBytes, long cacheHits,
            long cacheMisses, double seconds) {
        public double cacheHitRate() {
            return cacheHits + cacheMisses == 0 ? 0 : (double) cacheHits / (cacheHits + cacheMisses);
        }
    }

    /** {@code members}: the daemons' URLs as the group lists them (they decide which member owns what). */
    public record Result(Manifest manifest, List<String> members, List<Epoch> epochs, List<String> failures) {
    }

    private GroupRun() {
    }

    public static Result run(Path dir, Setup setup) throws IOException, InterruptedException {
        Path root = dir.resolve("store");
        Manifest manifest;
        try (FileObjectStore origin = new FileObjectStore(root)) {
            origin.createBucket("data");
            manifest = SyntheticDataset.write(origin, "data", "train", setup.shards(), setup.samplesPerShard(), setup.sampleBytes(),
                    setup.seed());
        }
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < setup.nodes(); i++) {
            try (ServerSocket s = new ServerSocket(0)) {
                ports.add(s.getLocalPort());
            }
        }
        String group = String.join(",", ports.stream().map(p -> "http://127.0.0.1:" + p).toList());
        List<Daemon> daemons = new ArrayList<>();
        List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        try {
            for (int i = 0; i < setup.nodes(); i++) {
                daemons.add(Daemon.start(ServeConfig.defaults().with(Map.of("store-root", root.toString(), "cache-dir",
                        dir.resolve("cache-" + i).toString(), "cache-size", Long.toString(setup.cachePerNode()), "block-size",
                        Integer.toString(setup.blockSize()), "prefetch-bytes", "0", "port", Integer.toString(ports.get(i)), "group", group,
                        "self", "http://127.0.0.1:" + ports.get(i)))));
            }
            List<JobRun> runs = new ArrayList<>();
            if (setup.plans()) {
                for (int i = 0; i < setup.nodes(); i++) {
                    runs.add(daemons.get(i).register(Job.planned("group-run", manifest, PlanConfig.DEFAULT.withSeed(setup.seed()),
                            new dev.ferry.plan.World(setup.nodes(), 1, 1), i, 1)));
                }
            }
            boolean[] alive = new boolean[setup.nodes()];
            java.util.Arrays.fill(alive, true);
            List<Epoch> epochs = new ArrayList<>();
            for (int epoch = 1; epoch <= setup.epochs(); epoch++) {
                if (setup.plans() && epoch >= 2) {
                    for (int i = 0; i < setup.nodes(); i++) {
                        if (alive[i]) {
                            runs.get(i).progress(epoch, 0, 0, new double[0]); // the epoch starts: hints are computed
                        }
                    }
                    long deadline = System.nanoTime() + 5_000_000_000L;
                    for (int i = 0; i < setup.nodes(); i++) {
                        while (alive[i] && runs.get(i).hints() == 0 && System.nanoTime() < deadline) {
                            Thread.sleep(10);
                        }
                    }
                }
                List<Daemon.Counters> before = daemons.stream().map(Daemon::counters).toList();
                long[] hintedBefore = daemons.stream().mapToLong(d -> d.hinted().stats().bytes()).toArray();
                Daemon.Counters[] atKill = new Daemon.Counters[setup.nodes()];
                EpochPlan plan = EpochPlan.of(manifest, PlanConfig.DEFAULT.withSeed(setup.seed()), epoch);
                int kill = epoch == setup.killEpoch() ? setup.killNode() : -1;
                int epochNumber = epoch;
                CountDownLatch halfway = new CountDownLatch(kill >= 0 ? 1 : 0);
                AtomicLong samples = new AtomicLong();
                AtomicLong failed = new AtomicLong();
                long start = System.nanoTime();
                List<Thread> consumers = new ArrayList<>();
                for (int node = 0; node < setup.nodes(); node++) {
                    if (!alive[node]) {
                        continue;
                    }
                    int n = node;
                    URI endpoint = daemons.get(n).endpoint();
                    consumers.add(Thread.ofPlatform().name("consumer-" + n).start(() -> {
                        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
                            long mine = 0;
                            for (long p = n; p < plan.size(); p += setup.nodes()) {
                                if (n == kill && mine >= plan.size() / setup.nodes() / 2) {
                                    halfway.countDown();
                                    return; // this node dies here
                                }
                                int sample = plan.sampleAt(p);
                                Shard shard = manifest.shards().get(plan.shardOf(sample));
                                long from = shard.sampleOffset(plan.indexInShard(sample));
                                long to = shard.sampleOffset(plan.indexInShard(sample) + 1);
                                mine++;
                                try {
                                    HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(endpoint.resolve("/data/" + shard.key().key()))
                                            .header("Range", "bytes=" + from + "-" + (to - 1)).header("If-Match", "\"" + shard.etag() + "\"")
                                            .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofByteArray());
                                    if (r.statusCode() != 206 || r.body().length != to - from) {
                                        failed.incrementAndGet();
                                        failures.add("node " + n + ": " + shard.key() + " [" + from + ", " + to + ") answered " + r.statusCode());
                                    } else {
                                        samples.incrementAndGet();
                                    }
                                    if (setup.plans() && mine % 8 == 0) {
                                        runs.get(n).progress(epochNumber, p + 1, 8, new double[0]); // as a loader reports its position
                                    }
                                } catch (IOException e) {
                                    failed.incrementAndGet();
                                    failures.add("node " + n + ": " + shard.key() + ": " + e);
                                }
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }));
                }
                if (kill >= 0) {
                    halfway.await();
                    atKill[kill] = daemons.get(kill).counters();
                    daemons.get(kill).close();
                    alive[kill] = false;
                }
                for (Thread t : consumers) {
                    t.join();
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                long egress = 0;
                long peer = 0;
                long hinted = 0;
                long hits = 0;
                long misses = 0;
                for (int i = 0; i < setup.nodes(); i++) {
                    Daemon.Counters b = before.get(i);
                    Daemon.Counters a = atKill[i] != null ? atKill[i] : alive[i] ? daemons.get(i).counters() : b;
                    egress += a.meter().egressBytes() - b.meter().egressBytes();
                    peer += a.peerBytes() - b.peerBytes();
                    hinted += daemons.get(i).hinted().stats().bytes() - hintedBefore[i];
                    hits += a.cache().hits() - b.cache().hits();
                    misses += a.cache().misses() - b.cache().misses();
                }
                epochs.add(new Epoch(epoch, samples.get(), failed.get(), egress, peer, hinted, hits, misses, seconds));
            }
            return new Result(manifest, List.of(group.split(",")), epochs, List.copyOf(failures));
        } finally {
            for (Daemon d : daemons) {
                d.close();
            }
        }
    }

    /** Deletes what a run wrote (its folders under {@code dir}). */
    static void clean(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
