package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.loader.SyntheticDataset;
import dev.ferry.plan.RankAssignment;
import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Shard;
import dev.ferry.plan.World;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.store.shared.Rendezvous;
import dev.ferry.time.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * ferry on real separate hosts: network namespaces on a bridge ({@code scripts/cluster-netns}), the object
 * store ({@code ferry store}) in one, dnsmasq and etcd in another, one daemon ({@code ferry serve}) in each of
 * five more, with {@code tc netem} delay where the kernel has it. This test runs in the host namespace as the
 * training job's consumers: one per node, each reading its node's share of every epoch through its node's
 * daemon (ranged GETs pinned to the manifest's ETags), a node-partition job of four nodes registered on each
 * daemon. Scenarios, first with the group found by DNS (dnsmasq answering the "headless Service" name
 * through each namespace's resolv.conf), then with etcd:
 * <ol>
 * <li>(a) four members: epoch 1 egresses the corpus once, epoch 2 reads local disks;
 * <li>(c) a fifth member joins (its DNS record appears; or it registers in etcd): every member sees it, and
 * the share of objects whose owner changes is measured against 1/5;
 * <li>(b) {@code kill -9} of one member halfway through epoch 3: the others see it down (measured), the
 * job's reads all succeed (its node's consumer goes on through the next node's daemon), and the extra
 * egress of epochs 3 and 4 is measured against the dead member's share (what it egressed in epoch 1).
 * </ol>
 * Needs root, iproute2, dnsmasq and etcd (scripts/test installs them); skips without them, or fails under
 * FERRY_REQUIRE_REAL_CLIENTS=1. Always removes its namespaces and processes. Prints the figures for BENCHMARKS.md.
 */
class ClusterNetnsTest {
    static final String NET = "10.213.0.";
    static final String SERVICE = "ferry-headless.ml.svc.cluster.local";
    static final int PORT = 9099;
    static final int NODES = 4;
    static final int SHARDS = 512;
    /** Reader threads per node, as a DataLoader's workers: each reads every WORKERS-th step of its node's share. */
    static final int WORKERS = 4;
    static final long SEED = 11;
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    final List<Process> processes = Collections.synchronizedList(new ArrayList<>());
    /** The daemons of the current run, by node number. */
    final Map<Integer, Process> daemons = new HashMap<>();
    Path work;
    Path script;
    /** The run got as far as its figures: its folder can go (else its logs are kept). */
    boolean passed;
    boolean netem;

    static String host(int n) {
        return NET + (10 + n); // n1 .. n5
    }

    static URI daemon(int n) {
        return URI.create("http://" + host(n) + ":" + PORT);
    }

    /** What one run of the scenarios measured. */
    record Figures(String source, long dataset, List<Long> egressByEpoch, List<Double> hitRateByEpoch, List<Double> secondsByEpoch,
            long deadShare, long extraEgress, long deathSkipMillis, long joinMillis, double ownerChangeShare, long failedReads,
            long clientFailovers, List<String> failures) {
    }

    @Test
    void membersFoundByDnsThenEtcd_epochsReadLocalDisks_aKilledMemberIsSkipped_aJoiningMemberTakesItsShare() throws Exception {
        Servers.requireTool("0".equals(Servers.run(Duration.ofSeconds(5), Map.of(), "id", "-u").output().trim()),
                "root (network namespaces)");
        Servers.requireTool(Servers.onPath("ip") != null || Files.isExecutable(Path.of("/usr/sbin/ip")), "iproute2 (ip)");
        Servers.requireTool(Files.isExecutable(Path.of("/usr/sbin/dnsmasq")), "dnsmasq (Debian dnsmasq-base)");
        Servers.requireTool(Files.isExecutable(Path.of("/usr/bin/etcd")), "etcd (Debian etcd-server)");
        script = repo().resolve("scripts/cluster-netns");
        work = Files.createTempDirectory("ferry-cluster-");
        try {
            Servers.Result up = Servers.run(Duration.ofSeconds(60), Map.of(), script.toString(), "up", work.toString());
            assertThat(up.exitCode()).as("cluster-netns up: " + up.output()).isZero();
            netem = Files.readString(work.resolve("netem")).trim().equals("yes");
            Manifest manifest = startStore();
            Figures dns = scenarios("dns:" + SERVICE + ":" + PORT, manifest, "dns");
            Figures etcd = scenarios("etcd:http://" + NET + "2:2379/ferry/train", manifest, "etcd");
            for (Figures f : List.of(dns, etcd)) {
                report(f);
            }
            passed = true;
            for (Figures f : List.of(dns, etcd)) {
                assertThat(f.failures()).as(f.source() + ": reads that failed").isEmpty();
                assertThat(f.failedReads()).as(f.source()).isZero();
                assertThat(f.egressByEpoch().get(0)).as(f.source() + ": epoch 1 egresses the corpus once")
                        .isBetween(f.dataset(), f.dataset() + f.dataset() / 50);
                assertThat(f.egressByEpoch().get(1)).as(f.source() + ": epoch 2 egress").isLessThan(f.dataset() / 100);
                assertThat(f.hitRateByEpoch().get(1)).as(f.source() + ": epoch 2 reads local disks").isGreaterThan(0.99);
                assertThat(f.deathSkipMillis()).as(f.source() + ": a killed member is skipped within 2 s").isLessThanOrEqualTo(2000);
                assertThat(f.extraEgress()).as(f.source() + ": extra egress after the kill, at most 1.05x the dead member's share "
                        + f.deadShare()).isLessThanOrEqualTo(f.deadShare() * 105 / 100);
                assertThat(f.ownerChangeShare()).as(f.source() + ": share of objects that change owner when a fifth joins")
                        .isLessThanOrEqualTo(1.1 / 5);
            }
        } finally {
            for (Process p : processes) {
                p.destroyForcibly();
            }
            Servers.run(Duration.ofSeconds(60), Map.of(), script.toString(), "down");
            if (passed) {
                try (Stream<Path> files = Files.walk(work)) {
                    files.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            } else {
                System.out.println("ClusterNetnsTest: the hosts' logs are kept in " + work);
            }
        }
    }

    static Path repo() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("scripts/cluster-netns"))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("scripts/cluster-netns above the working directory").isNotNull();
        return dir;
    }

    /** A process in network namespace {@code ns}: {@code ip netns exec} execs it, so killing the Process kills it. */
    Process inNamespace(String ns, Path log, List<String> command) throws IOException {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        full.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(full).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("AWS_ACCESS_KEY_ID", "ferry");
        pb.environment().put("AWS_SECRET_ACCESS_KEY", "ferry-secret");
        pb.environment().put("AWS_REGION", "us-east-1");
        Process p = pb.start();
        processes.add(p);
        return p;
    }

    static List<String> ferry(String... args) {
        List<String> c = new ArrayList<>(Servers.javaCommand("dev.ferry.cli.Main", args));
        c.add(1, "-Xmx384m");
        c.add(1, "-XX:+UseSerialGC");
        c.add(1, "-XX:TieredStopAtLevel=1"); // eleven JVMs on a small machine: quick to start, little compiling
        return c;
    }

    /** The corpus written into the store's folder, the store started over it in its namespace, and the manifest with the store's ETags. */
    Manifest startStore() throws Exception {
        Path staging = Files.createTempDirectory(Path.of("/dev/shm"), "ferry-cluster-staging-");
        Path root = work.resolve("store");
        Manifest written;
        try (FileObjectStore folder = new FileObjectStore(staging)) {
            folder.createBucket("data");
            written = SyntheticDataset.write(folder, "data", "train", SHARDS, 2, 4096, SEED);
        }
        Files.createDirectories(root.resolve("data/train"));
        for (Shard s : written.shards()) {
            Files.copy(staging.resolve("data").resolve(s.key().key()), root.resolve("data").resolve(s.key().key()));
        }
        try (Stream<Path> files = Files.walk(staging)) {
            files.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        // without netem the store itself waits 25 ms before its first byte, as a store 25 ms away would
        List<String> store = new ArrayList<>(List.of("store", "--root", root.toString(), "--bind", NET + "3", "--port", "9000"));
        store.addAll(netem ? List.of("--profile", "none") : List.of("--profile", "cloud", "--latency-ms", "25", "--connection-mibps", "0",
                "--aggregate-mibps", "0", "--prefix-rps", "0"));
        inNamespace("fy-store", work.resolve("store.log"), ferry(store.toArray(String[]::new)));
        URI endpoint = URI.create("http://" + NET + "3:9000");
        awaitHttp(endpoint.resolve("/data?list-type=2&max-keys=1"), Duration.ofSeconds(60));
        Map<String, String> etags = new HashMap<>();
        try (S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(endpoint, "ferry", "ferry-secret"))) {
            String token = null;
            do {
                var page = s3.list(new ListRequest("data", "train/", null, token, 1000));
                for (ObjectMeta m : page.objects()) {
                    etags.put(m.key().key(), m.etag());
                }
                token = page.nextToken();
            } while (token != null);
        }
        List<Shard> shards = new ArrayList<>();
        for (Shard s : written.shards()) {
            shards.add(new Shard(s.key(), s.size(), etags.get(s.key().key()), s.samples(), s.sampleOffsets()));
        }
        Manifest manifest = new Manifest(shards);
        ManifestJson.write(manifest, "cluster test", root.resolve("data/manifest.json"));
        return manifest;
    }

    static void awaitHttp(URI uri, Duration within) throws Exception {
        Await.until("an answer at " + uri, within, () -> {
            HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
            return true;
        });
    }

    /** Waits for daemon {@code n} to answer; if it exits first, fails with the end of its log. */
    void awaitDaemon(int n, String run) throws Exception {
        Process p = daemons.get(n);
        try {
            Await.until("daemon n" + n + "'s answer", Duration.ofSeconds(90), () -> {
                if (!p.isAlive()) {
                    throw new AssertionError("daemon n" + n + " exited " + p.exitValue());
                }
                HTTP.send(HttpRequest.newBuilder(daemon(n).resolve("/_ferry/")).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.discarding());
                return true;
            });
        } catch (AssertionError e) {
            List<String> log = Files.readAllLines(work.resolve(run).resolve("n" + n + ".log"));
            throw new AssertionError(e.getMessage() + "; its log ends:\n" + String.join("\n", log.subList(Math.max(0, log.size() - 30), log.size())), e);
        }
    }

    static JsonNode status(int n) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(daemon(n).resolve("/_ferry/v1/status")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body());
    }

    static List<String> members(JsonNode status, String state) {
        List<String> out = new ArrayList<>();
        status.path("group").path("members").forEach(m -> {
            if (state == null || m.path("state").asText().equals(state)) {
                out.add(m.path("url").asText());
            }
        });
        return out;
    }

    /** Waits until every daemon of {@code nodes} lists exactly {@code expected} as its members, all up; the time it took. */
    static long awaitMembers(List<Integer> nodes, List<String> expected, Duration within) throws Exception {
        long start = System.nanoTime();
        for (int n : nodes) {
            Duration left = within.minusNanos(System.nanoTime() - start);
            try {
                Await.until("node " + n + " to list " + expected + ", all up", left.isNegative() ? Duration.ZERO : left, () -> {
                    JsonNode s = status(n);
                    return members(s, null).equals(expected) && members(s, "up").size() == expected.size();
                });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; it lists " + status(n).path("group"), e);
            }
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    void startDaemon(String group, String run, int n) throws IOException {
        Path dir = work.resolve(run);
        Files.createDirectories(dir);
        daemons.put(n, inNamespace("fy-n" + n, dir.resolve("n" + n + ".log"), ferry("serve", "--bind", "0.0.0.0", "--insecure", "--port",
                Integer.toString(PORT), "--upstream", "http://" + NET + "3:9000", "--cache-dir", dir.resolve("cache-n" + n).toString(),
                "--cache-size", "256MiB", "--block-size", "1MiB", "--prefetch-bytes", "0", "--group", group, "--group-refresh", "1s")));
    }

    void dnsRecords(List<Integer> nodes) throws Exception {
        StringBuilder b = new StringBuilder();
        for (int n : nodes) {
            b.append(host(n)).append(' ').append(SERVICE).append('\n');
        }
        Files.writeString(work.resolve("hosts"), b.toString());
        Servers.run(Duration.ofSeconds(5), Map.of(), "kill", "-HUP", Files.readString(work.resolve("dnsmasq.pid")).trim());
    }

    /** The daemons' origin egress and local-tier block hits and misses, added up ({@code last}: the dead member's last reading). */
    static long[] counters(List<Integer> nodes) throws Exception {
        long[] c = new long[3];
        for (int n : nodes) {
            JsonNode t = status(n).path("tiers");
            c[0] += t.path("origin").path("egress_bytes").asLong();
            c[1] += t.path("local").path("hits").asLong();
            c[2] += t.path("local").path("misses").asLong();
        }
        return c;
    }

    Figures scenarios(String group, Manifest manifest, String run) throws Exception {
        List<Integer> four = List.of(1, 2, 3, 4);
        List<String> fourUrls = four.stream().map(n -> daemon(n).toString()).toList();
        if (group.startsWith("dns:")) {
            dnsRecords(four);
        }
        for (int n : four) {
            startDaemon(group, run, n);
        }
        for (int n : four) {
            awaitDaemon(n, run);
        }
        awaitMembers(four, fourUrls, Duration.ofSeconds(20));
        String job = "train-" + run;
        World world = new World(NODES, 1, 1);
        PlanConfig plan = PlanConfig.DEFAULT.withSeed(SEED).withPartition(PlanConfig.Partition.NODE).forWorld(world);
        for (int n : four) {
            String body = JSON.createObjectNode().put("job", job).put("manifest_key", "data/manifest.json").put("seed", SEED)
                    .put("partition", "node").put("node", n - 1).set("world", JSON.createObjectNode().put("nodes", NODES)).toString();
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(daemon(n).resolve("/_ferry/v1/jobs"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as("registering on node %d: %s", n, r.body()).isEqualTo(200);
        }
        List<Long> egress = new ArrayList<>();
        List<Double> hitRate = new ArrayList<>();
        List<Double> seconds = new ArrayList<>();
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        AtomicLong failed = new AtomicLong();
        AtomicLong failovers = new AtomicLong();
        // (a) four members, two epochs
        long deadEpoch1 = 0;
        for (int epoch = 1; epoch <= 2; epoch++) {
            long[] before = counters(four);
            long deadBefore = counters(List.of(3))[0];
            long start = System.nanoTime();
            readEpoch(manifest, plan, world, epoch, -1, null, failed, failovers, failures);
            seconds.add((System.nanoTime() - start) / 1e9);
            long[] after = counters(four);
            egress.add(after[0] - before[0]);
            hitRate.add((double) (after[1] - before[1]) / Math.max(1, after[1] - before[1] + after[2] - before[2]));
            if (epoch == 1) {
                deadEpoch1 = counters(List.of(3))[0] - deadBefore; // node 3 will die: what it egressed for its own shards
            }
        }
        // (c) a fifth member joins
        startDaemon(group, run, 5);
        awaitDaemon(5, run);
        long joinStart = System.nanoTime();
        List<Integer> five = List.of(1, 2, 3, 4, 5);
        if (group.startsWith("dns:")) {
            dnsRecords(five); // the new pod is ready: the headless Service lists it
        }
        List<String> fiveUrls = five.stream().map(n -> daemon(n).toString()).toList();
        awaitMembers(five, fiveUrls, Duration.ofSeconds(20));
        long joinMillis = (System.nanoTime() - joinStart) / 1_000_000;
        Rendezvous before = new Rendezvous(fourUrls);
        Rendezvous after = new Rendezvous(members(status(1), null));
        long moved = manifest.shards().stream().filter(s -> !before.members().get(before.owner(Rendezvous.keyOf(s.key())))
                .equals(after.members().get(after.owner(Rendezvous.keyOf(s.key()))))).count();
        double share = (double) moved / manifest.shards().size();
        for (Shard s : manifest.shards()) {
            String was = before.members().get(before.owner(Rendezvous.keyOf(s.key())));
            String now = after.members().get(after.owner(Rendezvous.keyOf(s.key())));
            assertThat(now).as("an object that changed owner went to the new member").isIn(was, daemon(5).toString());
        }
        // (b) kill -9 of node 3 halfway through epoch 3; its consumer goes on through node 4's daemon; then epoch 4
        List<Integer> survivors = List.of(1, 2, 4, 5);
        long[] beforeKill = counters(survivors);
        long[] skip = {-1};
        long start = System.nanoTime();
        readEpoch(manifest, plan, world, 3, 3, () -> {
            try {
                Process victim = daemons.get(3);
                java.time.Instant killedAt = java.time.Instant.now();
                victim.destroyForcibly(); // SIGKILL
                String dead = daemon(3).toString();
                long latest = 0;
                for (int n : survivors) {
                    // when the member went down, by this daemon's own clock (the hosts share this machine's clock)
                    java.time.Instant[] since = {null};
                    Await.until("node " + n + " to list " + dead + " down within 10 s of its kill",
                            Duration.ofSeconds(10).minus(Duration.between(killedAt, java.time.Instant.now())), () -> {
                                for (JsonNode m : status(n).path("group").path("members")) {
                                    if (m.path("url").asText().equals(dead) && m.path("state").asText().equals("down")) {
                                        since[0] = java.time.Instant.parse(m.path("since").asText());
                                    }
                                }
                                return since[0] != null;
                            });
                    latest = Math.max(latest, Duration.between(killedAt, since[0]).toMillis());
                }
                skip[0] = latest;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }, failed, failovers, failures);
        seconds.add((System.nanoTime() - start) / 1e9);
        long[] afterKill = counters(survivors);
        egress.add(afterKill[0] - beforeKill[0]);
        hitRate.add((double) (afterKill[1] - beforeKill[1]) / Math.max(1, afterKill[1] - beforeKill[1] + afterKill[2] - beforeKill[2]));
        start = System.nanoTime();
        readEpoch(manifest, plan, world, 4, 3, null, failed, failovers, failures);
        seconds.add((System.nanoTime() - start) / 1e9);
        long[] end = counters(survivors);
        egress.add(end[0] - afterKill[0]);
        hitRate.add((double) (end[1] - afterKill[1]) / Math.max(1, end[1] - afterKill[1] + end[2] - afterKill[2]));
        long extra = end[0] - beforeKill[0];
        for (Process p : daemons.values()) {
            p.destroy();
            p.waitFor();
            processes.remove(p);
        }
        daemons.clear();
        return new Figures(group, manifest.totalBytes(), egress, hitRate, seconds, deadEpoch1, extra, skip[0], joinMillis, share,
                failed.get(), failovers.get(), List.copyOf(failures));
    }

    /**
     * One epoch: a consumer per node reads its samples through its node's daemon. {@code kill} (or -1): that
     * node's daemon dies halfway (when {@code atHalfway} is given, it runs then while the others read on) or is
     * dead already; its consumer then reads through the next node's daemon, as a client told of a fallback would.
     */
    static void readEpoch(Manifest manifest, PlanConfig plan, World world, int epoch, int kill, Runnable atHalfway, AtomicLong failed,
            AtomicLong failovers, List<String> failures) throws Exception {
        EpochPlan p = EpochPlan.of(manifest, plan, epoch);
        RankAssignment deal = p.deal(world, 0);
        CountDownLatch halfway = new CountDownLatch(atHalfway == null ? 0 : WORKERS);
        CountDownLatch killed = new CountDownLatch(atHalfway == null ? 0 : 1);
        List<Thread> consumers = new ArrayList<>();
        for (int node = 1; node <= world.nodes(); node++) {
            for (int worker = 0; worker < WORKERS; worker++) {
                int n = node;
                int w = worker;
                consumers.add(Thread.ofPlatform().name("consumer-n" + n + "-" + w).start(() -> {
                    URI endpoint = n == kill && atHalfway == null ? daemon(kill + 1) : daemon(n);
                    boolean paused = false;
                    try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build()) {
                        for (int t = w; t < deal.steps(); t += WORKERS) {
                            if (n == kill && atHalfway != null && !paused && t >= deal.steps() / 2) {
                                paused = true;
                                halfway.countDown();
                                killed.await(); // its daemon dies while it reads: the next read fails
                            }
                            int sample = deal.sample(n - 1, t);
                            Shard shard = manifest.shards().get(p.shardOf(sample));
                            long lo = shard.sampleOffset(p.indexInShard(sample));
                            long hi = shard.sampleOffset(p.indexInShard(sample) + 1);
                            HttpResponse<byte[]> r;
                            try {
                                r = http.send(sampleRequest(endpoint, shard, lo, hi), HttpResponse.BodyHandlers.ofByteArray());
                            } catch (IOException e) {
                                if (n != kill || endpoint.equals(daemon(kill + 1))) {
                                    failed.incrementAndGet();
                                    failures.add("node " + n + ": " + shard.key() + ": " + e);
                                    continue;
                                }
                                failovers.incrementAndGet(); // its own daemon is gone: the next node's
                                endpoint = daemon(kill + 1);
                                try {
                                    r = http.send(sampleRequest(endpoint, shard, lo, hi), HttpResponse.BodyHandlers.ofByteArray());
                                } catch (IOException again) {
                                    failed.incrementAndGet();
                                    failures.add("node " + n + " (through node " + (kill + 1) + "): " + shard.key() + ": " + again);
                                    continue;
                                }
                            }
                            if (r.statusCode() != 206 || r.body().length != hi - lo) {
                                failed.incrementAndGet();
                                failures.add("node " + n + ": " + shard.key() + " [" + lo + ", " + hi + ") answered " + r.statusCode());
                            }
                        }
                        if (n == kill && atHalfway != null && !paused) {
                            halfway.countDown();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
            }
        }
        if (atHalfway != null) {
            halfway.await();
            atHalfway.run();
            killed.countDown();
        }
        for (Thread t : consumers) {
            t.join();
        }
    }

    static HttpRequest sampleRequest(URI endpoint, Shard shard, long lo, long hi) {
        return HttpRequest.newBuilder(endpoint.resolve("/data/" + shard.key().key())).header("Range", "bytes=" + lo + "-" + (hi - 1))
                .header("If-Match", "\"" + shard.etag() + "\"").timeout(Duration.ofSeconds(30)).build();
    }

    static void report(Figures f) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "cluster (%s), corpus %d bytes in %d objects:%n", f.source(), f.dataset(), SHARDS));
        String[] what = {"4 members", "4 members", "5 members, node 3 killed halfway", "4 live members"};
        for (int i = 0; i < f.egressByEpoch().size(); i++) {
            b.append(String.format(Locale.ROOT, "  epoch %d (%s): egress %d bytes (%.3fx corpus), local hit rate %.1f %%, %.1f s%n", i + 1,
                    what[i], f.egressByEpoch().get(i), (double) f.egressByEpoch().get(i) / f.dataset(), 100 * f.hitRateByEpoch().get(i),
                    f.secondsByEpoch().get(i)));
        }
        b.append(String.format(Locale.ROOT, "  kill -9: every other member marked it down (skipped) within %d ms; extra egress %d bytes = %.3fx the dead "
                + "member's share (%d bytes); failed reads %d; its consumer's failovers to the next node %d%n", f.deathSkipMillis(),
                f.extraEgress(), (double) f.extraEgress() / f.deadShare(), f.deadShare(), f.failedReads(), f.clientFailovers()));
        b.append(String.format(Locale.ROOT, "  a fifth member joined: every member listed it after %d ms; objects that changed owner: "
                + "%.3f (1/5 = 0.200)%n", f.joinMillis(), f.ownerChangeShare()));
        System.out.print(b);
    }
}
