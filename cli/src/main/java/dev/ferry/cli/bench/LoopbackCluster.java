package dev.ferry.cli.bench;

import dev.ferry.loader.SyntheticDataset;
import dev.ferry.plan.RankAssignment;
import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.CanonicalHomes;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.plan.World;
import dev.ferry.serve.Daemon;
import dev.ferry.serve.ServeConfig;
import dev.ferry.serve.jobs.Job;
import dev.ferry.serve.jobs.RunningJob;
import dev.ferry.serve.node.Counters;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A benchmark harness, not part of the daemon: several daemons for real on one machine, {@code nodes} daemons on
 * loopback ports over one folder as the origin (one regional group of all, or each on its own), and one consumer
 * per node reading its share of each epoch's plan through its own daemon, as the plan's {@link RankAssignment} gives it (the node partition: its own
 * shards; the global one: positions {@code n, n + N, ...}), with ranged GETs pinned to the manifest's ETags.
 * Optionally one daemon goes away halfway through an epoch: either it is closed and its consumer stops with
 * it (the others must not see a failed read), or ({@code resize}) the job checkpoints there, the last daemon
 * leaves, and the others resume the epoch on a world one node smaller, every sample read exactly once
 * (checked sample by sample), each daemon re-registered with the checkpoint's homes ({@link Job.Resume}), so only
 * the departed node's canonical nodes move. Measures, per epoch, what the daemons counted: origin egress and requests,
 * bytes served by peers (and of those, read from last epoch's reader by a hint), cache hits and misses. Used by
 * {@code ferry bench group}, {@code GroupTest} and {@code NodePartitionDaemonsTest}. Drives the daemons through
 * their Java API ({@link dev.ferry.serve.jobs.JobRegistry#register}, {@link RunningJob#progress}), as a loader reporting progress would.
 */
public final class LoopbackCluster {
    /**
     * What to run; {@code killNode} is -1 for no kill. Samples are {@code sampleBytes} to twice that.
     * {@code plans}: every daemon gets the job's plan (world of {@code nodes} nodes, its own node number) and a
     * progress report as each epoch starts, so it can ask last epoch's reader of a block first (peer hints)
     * and evict by the plan. {@code plan}: the partition (made definite for the starting world). {@code group}:
     * the daemons form one regional group. {@code resize}: the kill is a checkpoint and a resume on one node
     * fewer (the killed node must be the last).
     */
    public record Setup(int nodes, int shards, int samplesPerShard, int sampleBytes, long cachePerNode, int blockSize, int epochs,
            long seed, int killNode, int killEpoch, boolean plans, PlanConfig plan, boolean group, boolean resize) {
        public Setup {
            plan = plan.withSeed(seed).forWorld(new World(nodes, 1, 1));
            if (resize && killNode != nodes - 1) {
                throw new IllegalArgumentException("a resize removes the last node (" + (nodes - 1) + "), not node " + killNode);
            }
        }

        /** A regional group reading by the global plan (the setup of the first group benchmarks). */
        public static Setup globalGroup(int nodes, int shards, int samplesPerShard, int sampleBytes, long cachePerNode, int blockSize,
                int epochs, long seed, int killNode, int killEpoch, boolean plans) {
            return new Setup(nodes, shards, samplesPerShard, sampleBytes, cachePerNode, blockSize, epochs, seed, killNode, killEpoch, plans,
                    PlanConfig.DEFAULT.withPartition(PlanConfig.Partition.GLOBAL), true, false);
        }
    }

    /**
     * One epoch of the whole group; {@code missingSamples} and {@code extraReads} compare what the consumers
     * read with the plan: samples of the epoch nobody read, and reads beyond one per sample other than the
     * plan's padding; {@code egressRequests} counts GETs to the origin (not HEADs).
     */
    public record Epoch(int epoch, long samples, long failedReads, long egressBytes, long egressRequests, long peerBytes, long hintedBytes,
            long cacheHits, long cacheMisses, double seconds, long missingSamples, long extraReads) {
        public double cacheHitRate() {
            return cacheHits + cacheMisses == 0 ? 0 : (double) cacheHits / (cacheHits + cacheMisses);
        }
    }

    /** {@code members}: the daemons' URLs as the group lists them (they decide which member owns what). */
    public record Result(Manifest manifest, List<String> members, List<Epoch> epochs, List<String> failures) {
    }

    private LoopbackCluster() {
    }

    /** Runs {@code setup} in {@code dir}; {@code clock} times the epochs and the wait for the daemons' hints. */
    public static Result run(Path dir, Setup setup, Clock clock) throws IOException, InterruptedException {
        Path root = dir.resolve("store");
        Manifest manifest;
        try (FileObjectStore origin = new FileObjectStore(root)) {
            origin.createBucket("data");
            manifest = SyntheticDataset.write(origin, "data", "train", setup.shards(), setup.samplesPerShard(), setup.sampleBytes(),
                    setup.seed());
        }
        // every member's port at once: each socket stays open until all are chosen, so no port comes twice
        List<Integer> ports = new ArrayList<>();
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < setup.nodes(); i++) {
                ServerSocket s = new ServerSocket(0);
                held.add(s);
                ports.add(s.getLocalPort());
            }
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
        String group = String.join(",", ports.stream().map(p -> "http://127.0.0.1:" + p).toList());
        List<Daemon> daemons = new ArrayList<>();
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        try {
            for (int i = 0; i < setup.nodes(); i++) {
                Map<String, String> keys = new HashMap<>(Map.of("store-root", root.toString(), "cache-dir",
                        dir.resolve("cache-" + i).toString(), "cache-size", Long.toString(setup.cachePerNode()), "block-size",
                        Integer.toString(setup.blockSize()), "prefetch-bytes", "0", "port", Integer.toString(ports.get(i))));
                if (setup.group()) {
                    keys.put("group", group);
                    keys.put("self", "http://127.0.0.1:" + ports.get(i));
                }
                daemons.add(Daemon.start(ServeConfig.defaults().with(keys)));
            }
            World world = new World(setup.nodes(), 1, 1);
            List<RunningJob> runs = new ArrayList<>();
            if (setup.plans()) {
                for (int i = 0; i < setup.nodes(); i++) {
                    runs.add(daemons.get(i).jobs().register(Job.planned("group-run", manifest, setup.plan(), world, i, 1)));
                }
            }
            // where each canonical node lives: c mod nodes, then, after a resize, only what had to move moved (plan.CanonicalHomes)
            CanonicalHomes homes = CanonicalHomes.of(setup.plan().canonical(), setup.nodes());
            boolean[] alive = new boolean[setup.nodes()];
            Arrays.fill(alive, true);
            List<Epoch> epochs = new ArrayList<>();
            for (int epoch = 1; epoch <= setup.epochs(); epoch++) {
                if (setup.plans() && epoch >= 2) {
                    for (int i = 0; i < setup.nodes(); i++) {
                        if (alive[i]) {
                            runs.get(i).progress(epoch, 0, 0, new double[0]); // the epoch starts: hints are computed
                        }
                    }
                    if (setup.group()) {
                        long deadline = clock.nanoTime() + 5_000_000_000L;
                        for (int i = 0; i < world.nodes(); i++) {
                            while (alive[i] && runs.get(i).hints() == 0 && clock.nanoTime() < deadline) {
                                clock.sleep(Duration.ofMillis(10));
                            }
                        }
                    }
                }
                List<Counters> before = daemons.stream().map(d -> d.node().counters()).toList();
                Counters[] atKill = new Counters[setup.nodes()];
                EpochPlan plan = EpochPlan.of(manifest, setup.plan(), epoch);
                int kill = epoch == setup.killEpoch() ? setup.killNode() : -1;
                int[] reads = new int[plan.size()];
                AtomicLong samples = new AtomicLong();
                AtomicLong failed = new AtomicLong();
                long start = clock.nanoTime();
                RankAssignment deal = plan.deal(world, 0, homes);
                long padding;
                if (kill >= 0 && setup.resize()) {
                    // every consumer stops at the same step (a checkpoint), the last daemon leaves, the rest resume
                    int half = deal.steps() / 2;
                    read(setup, manifest, plan, deal, 0, half, alive, -1, daemons, runs, epoch, reads, samples, failed, failures, null);
                    atKill[kill] = daemons.get(kill).node().counters();
                    daemons.get(kill).close();
                    alive[kill] = false;
                    world = new World(setup.nodes() - 1, 1, 1);
                    long consumed = (long) half * setup.nodes();
                    // the checkpoint: the position, the homes, and whose order the round in progress follows
                    CanonicalHomes round = deal.roundHomesAt(consumed);
                    Job.Resume checkpoint = new Job.Resume(homes, epoch, consumed, round);
                    homes = homes.resized(world.nodes());
                    if (setup.plans()) {
                        for (int i = 0; i < world.nodes(); i++) {
                            RunningJob resumed = daemons.get(i).jobs().register(Job.planned("group-run", manifest, setup.plan(), world, i, 1,
                                    checkpoint));
                            runs.set(i, resumed);
                            resumed.progress(epoch, consumed, 0, new double[0]);
                        }
                    }
                    RankAssignment rest = plan.deal(world, consumed, homes, round);
                    read(setup, manifest, plan, rest, 0, rest.steps(), alive, -1, daemons, runs, epoch, reads, samples, failed, failures, null);
                    padding = (long) rest.steps() * world.ranks() - (plan.size() - consumed);
                } else {
                    int killed = kill;
                    read(setup, manifest, plan, deal, 0, deal.steps(), alive, kill, daemons, runs, epoch, reads, samples, failed, failures, () -> {
                        atKill[killed] = daemons.get(killed).node().counters(); // while the others go on reading
                        daemons.get(killed).close();
                        alive[killed] = false;
                    });
                    padding = (long) deal.steps() * world.ranks() - plan.size();
                }
                double seconds = (clock.nanoTime() - start) / 1e9;
                long missing = 0;
                long extra = 0;
                for (int r : reads) {
                    missing += r == 0 ? 1 : 0;
                    extra += Math.max(0, r - 1);
                }
                long egress = 0;
                long requests = 0;
                long peer = 0;
                long hinted = 0;
                long hits = 0;
                long misses = 0;
                for (int i = 0; i < setup.nodes(); i++) {
                    Counters b = before.get(i);
                    Counters a = atKill[i] != null ? atKill[i] : alive[i] ? daemons.get(i).node().counters() : b;
                    egress += a.meter().egressBytes() - b.meter().egressBytes();
                    requests += a.meter().requests(MeteredStore.Op.GET) - b.meter().requests(MeteredStore.Op.GET);
                    peer += a.peerBytes() - b.peerBytes();
                    hinted += a.hintedBytes() - b.hintedBytes();
                    hits += a.cache().hits() - b.cache().hits();
                    misses += a.cache().misses() - b.cache().misses();
                }
                epochs.add(new Epoch(epoch, samples.get(), failed.get(), egress, requests, peer, hinted, hits, misses, seconds, missing,
                        Math.max(0, extra - Math.max(0, padding))));
            }
            return new Result(manifest, List.of(group.split(",")), epochs, List.copyOf(failures));
        } finally {
            for (Daemon d : daemons) {
                d.close();
            }
        }
    }

    /**
     * One consumer per live node reads its samples of steps {@code [from, to)} of {@code deal} through its
     * daemon; node {@code kill} (or -1) stops halfway, and {@code atHalfway} runs then, while the others read on.
     */
    private static void read(Setup setup, Manifest manifest, EpochPlan plan, RankAssignment deal, int from, int to, boolean[] alive, int kill,
            List<Daemon> daemons, List<RunningJob> runs, int epoch, int[] reads, AtomicLong samples, AtomicLong failed, List<String> failures,
            Runnable atHalfway) throws InterruptedException {
        CountDownLatch halfway = new CountDownLatch(kill >= 0 ? 1 : 0);
        List<Thread> consumers = new ArrayList<>();
        int ranks = deal.world().ranks();
        for (int node = 0; node < deal.world().nodes(); node++) {
            if (!alive[node]) {
                continue;
            }
            int n = node;
            URI endpoint = daemons.get(n).endpoint();
            consumers.add(Thread.ofPlatform().name("consumer-" + n).start(() -> {
                try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
                    for (int t = from; t < to; t++) {
                        if (n == kill && t - from >= (to - from) / 2) {
                            halfway.countDown();
                            return; // this node dies here
                        }
                        int sample = deal.sample(n, t);
                        Shard shard = manifest.shards().get(plan.shardOf(sample));
                        long lo = shard.sampleOffset(plan.indexInShard(sample));
                        long hi = shard.sampleOffset(plan.indexInShard(sample) + 1);
                        try {
                            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(endpoint.resolve("/data/" + shard.key().key()))
                                    .header("Range", "bytes=" + lo + "-" + (hi - 1)).header("If-Match", "\"" + shard.etag() + "\"")
                                    .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofByteArray());
                            if (r.statusCode() != 206 || r.body().length != hi - lo) {
                                failed.incrementAndGet();
                                failures.add("node " + n + ": " + shard.key() + " [" + lo + ", " + hi + ") answered " + r.statusCode());
                            } else {
                                samples.incrementAndGet();
                                synchronized (reads) {
                                    reads[sample]++;
                                }
                            }
                            if (setup.plans() && (t + 1) % 8 == 0) {
                                runs.get(n).progress(epoch, deal.start() + (long) (t + 1) * ranks, 8, new double[0]); // as a loader reports
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
        halfway.await();
        if (kill >= 0) {
            atHalfway.run();
        }
        for (Thread t : consumers) {
            t.join();
        }
    }
}
