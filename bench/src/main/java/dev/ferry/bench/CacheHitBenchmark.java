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
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cache-hit read throughput of the local tier against a plain {@link FileChannel} read of the same bytes
 * from the same disk: what ferry's bookkeeping (index lookup, pin, block-by-block positional reads) and the
 * check of each block before its bytes leave ({@code verify}: on-load, the default, trusts a block whose file is
 * unchanged and whose pages are resident; always reads every block whole and checks it on every use;
 * first-read checks once) cost on a hit. {@code cacheHit} reads one whole object into a 64 KiB buffer;
 * {@code cacheHitRange} reads 64 KiB of one at an offset, as a ranged GET or a mount's read would; both sides
 * read from the page cache.
 *
 * <pre>
 * mvn -q -B -DskipTests -pl bench -am package
 * java -jar bench/target/benchmarks.jar CacheHitBenchmark -f 1 -wi 3 -i 5
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class CacheHitBenchmark {
    private static final int OBJECTS = 16;

    @Param({"4194304"})
    int objectSize;

    @Param({"4194304"})
    int blockSize;

    @Param({"on-load", "always", "first-read"})
    String verify;

    private Path dir;
    private CachingStore cache;
    private ObjectMeta[] metas;
    private Path[] files;
    private final byte[] buffer = new byte[64 * 1024];
    private int next;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("ferry-jmh-");
        FileObjectStore origin = new FileObjectStore(dir.resolve("origin"));
        origin.createBucket("bench");
        metas = new ObjectMeta[OBJECTS];
        files = new Path[OBJECTS];
        byte[] data = new byte[objectSize];
        Random random = new Random(1);
        for (int i = 0; i < OBJECTS; i++) {
            random.nextBytes(data);
            ObjectKey key = ObjectKey.of("bench", "objects/" + i);
            metas[i] = origin.put(key, PutBody.ofBytes(data));
            files[i] = dir.resolve("origin/bench/objects/" + i);
        }
        cache = new CachingStore(origin, CacheConfig.of(dir.resolve("cache"), 4L * OBJECTS * objectSize).withBlockSize(blockSize)
                .withVerify(VerifyMode.parse(verify)));
        for (int i = 0; i < OBJECTS; i++) {
            readThroughCache(i); // the first read fetches; the next checks each block (on-load, always)
        }
        try {
            Thread.sleep(200); // past the time a block written a moment ago is checked on every use (on-load)
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (int i = 0; i < OBJECTS; i++) {
            readThroughCache(i);
        }
        if (cache.stats().residentBlocks() == 0) {
            throw new IllegalStateException("the cache kept nothing: " + cache.stats());
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        cache.close();
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private long readThroughCache(int i) throws IOException {
        long total = 0;
        try (ObjectContent c = cache.get(new GetRequest(metas[i].key(), null, metas[i].etag()))) {
            InputStream in = c.stream();
            for (int n; (n = in.read(buffer, 0, buffer.length)) > 0; ) {
                total += n;
            }
        }
        return total;
    }

    @Benchmark
    public long cacheHit() throws IOException {
        int i = next++ % OBJECTS;
        return readThroughCache(i);
    }

    @Benchmark
    public long cacheHitRange() throws IOException {
        int n = next++;
        int i = n % OBJECTS;
        long offset = (long) (n * 7919L % Math.max(1, objectSize / buffer.length - 1)) * buffer.length + (n & 1) * 1234;
        long total = 0;
        try (ObjectContent c = cache.get(new GetRequest(metas[i].key(), ByteRange.of(offset, buffer.length), metas[i].etag()))) {
            InputStream in = c.stream();
            for (int k; (k = in.read(buffer, 0, buffer.length)) > 0; ) {
                total += k;
            }
        }
        return total;
    }

    @Benchmark
    public long plainFileChannel() throws IOException {
        int i = next++ % OBJECTS;
        long total = 0;
        try (FileChannel ch = FileChannel.open(files[i], StandardOpenOption.READ)) {
            ByteBuffer buf = ByteBuffer.wrap(buffer);
            for (int n; (n = ch.read(buf.clear())) > 0; ) {
                total += n;
            }
        }
        return total;
    }
}
