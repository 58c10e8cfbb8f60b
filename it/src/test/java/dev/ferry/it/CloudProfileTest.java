package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.time.ManualClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded store's cloud profile, seen from a real S3 client over a real socket. */
class CloudProfileTest {
    @TempDir
    Path root;

    @Test
    void firstByte_takesAtLeastTheConfiguredLatency() throws IOException {
        CloudProfile profile = CloudProfile.none().withFirstByteLatency(Duration.ofMillis(120));
        try (EmbeddedStore server = EmbeddedStore.start(root, 0, profile);
                S3ObjectStore s3 = client(server)) {
            s3.createBucket("lat");
            ObjectKey key = ObjectKey.of("lat", "a/obj");
            s3.put(key, PutBody.ofBytes(new byte[1000]));
            for (int i = 0; i < 3; i++) {
                long start = System.nanoTime();
                try (ObjectContent c = s3.get(GetRequest.range(key, ByteRange.of(0, 100)))) {
                    assertThat(c.stream().read()).isGreaterThanOrEqualTo(0);
                }
                long firstByteMillis = (System.nanoTime() - start) / 1_000_000;
                assertThat(firstByteMillis).isGreaterThanOrEqualTo(120);
            }
        }
    }

    @Test
    void burstOverPrefixLimit_meetsSlowDown_andOtherPrefixesAreUnaffected() throws Exception {
        CloudProfile profile = CloudProfile.none().withPrefixRequestRate(20);
        // the limit's buckets refill on this clock alone: the burst meets exactly the tokens left, however slow the machine
        ManualClock clock = new ManualClock();
        try (EmbeddedStore server = EmbeddedStore.start(root, "127.0.0.1", 0, profile, clock);
                S3ObjectStore s3 = client(server)) {
            s3.createBucket("burst");
            ObjectKey hot = ObjectKey.of("burst", "hot/obj");
            ObjectKey cold = ObjectKey.of("burst", "cold/obj");
            s3.put(hot, PutBody.ofBytes(new byte[10]));
            clock.advanceMillis(200); // the prefix's bucket refills after the PUT
            s3.put(cold, PutBody.ofBytes(new byte[10]));
            AtomicInteger ok = new AtomicInteger();
            AtomicInteger slowDown = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int i = 0; i < 80; i++) {
                    done.add(pool.submit(() -> {
                        try {
                            s3.head(hot);
                            ok.incrementAndGet();
                        } catch (StoreException e) {
                            assertThat(e.kind()).isEqualTo(StoreException.Kind.THROTTLED);
                            assertThat(e.httpStatus()).isEqualTo(503);
                            slowDown.incrementAndGet();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
            } finally {
                pool.shutdown();
            }
            assertThat(slowDown.get()).isPositive();
            assertThat(ok.get()).isPositive();
            assertThat(server.stats().slowDowns()).isEqualTo(slowDown.get());
            assertThat(s3.head(cold).size()).isEqualTo(10); // another prefix has its own budget: hot's is spent, and no time passed
        }
    }

    @Test
    void connectionBandwidthCap_slowsASingleStream() throws IOException {
        CloudProfile profile = CloudProfile.none().withConnectionBandwidth(16L << 20);
        try (EmbeddedStore server = EmbeddedStore.start(root, 0, profile);
                S3ObjectStore s3 = client(server)) { // the bare store: one request, one connection
            s3.createBucket("bandwidth");
            ObjectKey key = ObjectKey.of("bandwidth", "big");
            s3.put(key, PutBody.ofBytes(new byte[8 << 20]));
            long start = System.nanoTime();
            assertThat(s3.readBytes(key, null)).hasSize(8 << 20);
            double seconds = (System.nanoTime() - start) / 1e9;
            // 8 MiB at 16 MiB/s cannot take less than half a second (a lower bound only: noise only adds time)
            assertThat(seconds).isGreaterThanOrEqualTo(0.45);
            assertThat(server.stats().bytesServed()).isEqualTo(8 << 20);
        }
    }

    @Test
    void filesCopiedIntoTheFolder_areServedWithAnEtagThatChangesWithTheFile() throws Exception {
        java.nio.file.Files.createDirectories(root.resolve("dropped/dir"));
        java.nio.file.Files.writeString(root.resolve("dropped/dir/a.txt"), "first");
        try (EmbeddedStore server = EmbeddedStore.start(root, 0, CloudProfile.none());
                S3ObjectStore s3 = client(server)) {
            ObjectKey key = ObjectKey.of("dropped", "dir/a.txt");
            String etag = s3.head(key).etag();
            assertThat(new String(s3.readBytes(key, null))).isEqualTo("first");
            assertThat(s3.list(dev.ferry.store.ListRequest.of("dropped", "dir/")).objects())
                    .singleElement().satisfies(m -> assertThat(m.etag()).isEqualTo(etag));
            try (ObjectContent c = s3.get(GetRequest.range(key, ByteRange.of(1, 2)))) {
                assertThat(c.meta().etag()).isEqualTo(etag);
            }
            java.nio.file.Files.writeString(root.resolve("dropped/dir/a.txt"), "second!");
            java.nio.file.Files.setLastModifiedTime(root.resolve("dropped/dir/a.txt"),
                    java.nio.file.attribute.FileTime.from(java.time.Instant.now().plusSeconds(5)));
            assertThat(s3.head(key).etag()).isNotEqualTo(etag);
        }
    }

    private static S3ObjectStore client(EmbeddedStore server) {
        return new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "key", "secret"));
    }
}
