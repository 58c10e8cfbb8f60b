package dev.ferry.bench;

import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CachingStore;
import dev.ferry.cache.VerifyMode;
import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

/**
 * What checking blocks before their bytes leave costs an in-process reader of the local tier, per read, by
 * {@code verify} setting, in CPU time of the reading thread (steadier than wall time on a shared machine):
 * <ol>
 *   <li>resident hits: 16 KiB and 64 KiB ranged reads of 4 MiB blocks whose pages are in the page cache
 *       (on-load trusts them: a stat and a mincore per read; first-read reads only; always reads and checks the
 *       whole block every time);
 *   <li>after the page cache is dropped (as root only; skipped otherwise): the first 64 KiB read of each block,
 *       which under on-load reads and checks the whole block, in wall time (it waits on the disk).
 * </ol>
 * Rounds alternate between the settings; medians are reported.
 *
 * <pre>
 * mvn -q -B -DskipTests -pl bench -am package
 * java -cp bench/target/benchmarks.jar dev.ferry.bench.CheckedReadCost
 * </pre>
 */
public final class CheckedReadCost {
    private static final int OBJECTS = 16;
    private static final int SIZE = 4 << 20;
    private static final String[] MODES = {"first-read", "on-load", "always"};

    private CheckedReadCost() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("ferry-checked-read-");
        try {
            run(dir, Clock.system());
        } finally {
            try (Stream<Path> walk = Files.walk(dir)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** {@code clock} times the reads after the page cache is dropped (the reads of resident blocks are timed in CPU time). */
    private static void run(Path dir, Clock clock) throws Exception {
        FileObjectStore origin = new FileObjectStore(dir.resolve("origin"));
        origin.createBucket("bench");
        ObjectMeta[] metas = new ObjectMeta[OBJECTS];
        byte[] data = new byte[SIZE];
        Random random = new Random(1);
        for (int i = 0; i < OBJECTS; i++) {
            random.nextBytes(data);
            metas[i] = origin.put(ObjectKey.of("bench", "o" + i), PutBody.ofBytes(data));
        }
        Map<String, CachingStore> caches = new LinkedHashMap<>();
        for (String m : MODES) {
            CachingStore c = new CachingStore(origin, CacheConfig.of(dir.resolve("cache-" + m), 1L << 30).withVerify(VerifyMode.parse(m)));
            for (ObjectMeta meta : metas) {
                c.readBytes(meta.key(), null); // fills
            }
            caches.put(m, c);
        }
        Thread.sleep(300); // past the settling time of a block written a moment ago
        for (CachingStore c : caches.values()) {
            for (ObjectMeta meta : metas) {
                c.readBytes(meta.key(), null); // on-load checks each block once here
            }
        }
        System.out.println("machine: " + Runtime.getRuntime().availableProcessors() + " cores, Java " + Runtime.version()
                + ", load average " + Files.readString(Path.of("/proc/loadavg")).trim());
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        for (int length : new int[] {16 * 1024, 64 * 1024}) {
            Map<String, List<Double>> cpu = new LinkedHashMap<>();
            for (int round = 0; round < 12; round++) {
                for (Map.Entry<String, CachingStore> e : caches.entrySet()) {
                    int ops = e.getKey().equals("always") ? 500 : 20_000;
                    long before = mx.getCurrentThreadCpuTime();
                    for (int n = 0; n < ops; n++) {
                        long offset = n * 7919L % (SIZE / length - 1) * length;
                        read(e.getValue(), metas[n % OBJECTS], offset, length);
                    }
                    if (round >= 2) { // two rounds for the JIT
                        cpu.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add((mx.getCurrentThreadCpuTime() - before) / 1e3 / ops);
                    }
                }
            }
            for (Map.Entry<String, List<Double>> e : cpu.entrySet()) {
                System.out.printf(Locale.ROOT, "resident %2d KiB reads  %-10s  %8.1f us CPU per read (median of %d rounds)%n",
                        length / 1024, e.getKey(), median(e.getValue()), e.getValue().size());
            }
        }
        if (!Files.isWritable(Path.of("/proc/sys/vm/drop_caches"))) {
            System.out.println("page cache dropped: skipped (needs root)");
        } else {
            Map<String, List<Double>> wall = new LinkedHashMap<>();
            for (int round = 0; round < 3; round++) {
                for (Map.Entry<String, CachingStore> e : caches.entrySet()) {
                    Process p = new ProcessBuilder("sh", "-c", "sync && echo 3 > /proc/sys/vm/drop_caches").inheritIO().start();
                    p.waitFor();
                    long start = clock.nanoTime();
                    for (int i = 0; i < OBJECTS; i++) {
                        read(e.getValue(), metas[i], (long) (i * 7919L % 62) * 65536 + 1234, 64 * 1024);
                    }
                    wall.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add((clock.nanoTime() - start) / 1e3 / OBJECTS);
                }
            }
            for (Map.Entry<String, List<Double>> e : wall.entrySet()) {
                System.out.printf(Locale.ROOT, "page cache dropped, first 64 KiB read of a block  %-10s  %8.0f us wall (median of %d rounds)%n",
                        e.getKey(), median(e.getValue()), e.getValue().size());
            }
        }
        for (CachingStore c : caches.values()) {
            c.close();
        }
    }

    private static void read(CachingStore cache, ObjectMeta meta, long offset, int length) throws IOException {
        try (ObjectContent c = cache.get(new GetRequest(meta.key(), ByteRange.of(offset, length), meta.etag()))) {
            if (c.stream().readNBytes(new byte[length], 0, length) != length) {
                throw new IOException("short read");
            }
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }
}
