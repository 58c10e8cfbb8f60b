package dev.ferry.tier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.settings.SettingTable;
import dev.ferry.settings.Settings;
import dev.ferry.store.FaultyStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Await;
import dev.ferry.writeback.Scratch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The door decides which store answers: the scratch bucket on local disk only, write-back's local copy of a key not
 * uploaded yet, the local tier's blocks for a read that may not fetch, the store below for the rest; a write that
 * goes through behind a write still local waits for write-back's fence. Over a folder store (with a fault injector
 * and a request counter between it and the tiers), the tiers {@link TierStack} builds.
 */
class NodeStoresTest {
    private static final Settings SETTINGS = SettingTable.of(TierSettings.ROWS).defaults().with(Map.of("cache-size", "64MiB",
            "block-size", "1MiB", "metadata-ttl", "5s", "write-back-quota", "32MiB"));

    @TempDir
    Path tmp;
    FaultyStore faulty;
    TrackingStore tracking;

    @BeforeEach
    void setUp() throws IOException {
        FileObjectStore origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        faulty = new FaultyStore(origin);
        tracking = new TrackingStore(faulty);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private TierStack stack(boolean writeBack) throws IOException {
        return TierStack.over(tracking, SETTINGS, tmp.resolve("cache")).writeBack(writeBack).build();
    }

    @Test
    void theScratchBucket_isLocalOnly_neverUploaded_andWithinItsQuota() throws Exception {
        try (TierStack stack = stack(true); Scratch scratch = new Scratch(tmp.resolve("scratch"), "tmp", 100_000, Duration.ofMinutes(5))) {
            NodeStores door = stack.door(scratch);
            ObjectKey a = ObjectKey.of("tmp", "features/a.npy");
            byte[] bytes = random(60_000, 1);
            NodeStores.Written w = door.put(a, PutBody.ofBytes(bytes), false, Duration.ofSeconds(5));
            assertThat(w.durable()).as("scratch is never more than local").isFalse();
            assertThat(door.onlyLocal(a)).isTrue();
            assertThat(door.get(GetRequest.whole(a)).readAllBytes()).isEqualTo(bytes);
            assertThat(door.get(GetRequest.whole(a).reaching(GetRequest.Reach.CACHED))).as("not the local tier's to answer").isNull();
            assertThat(door.storeFor("tmp").list(ListRequest.of("tmp", "features/")).objects()).hasSize(1);
            assertThatThrownBy(() -> door.put(ObjectKey.of("tmp", "features/b.npy"), PutBody.ofBytes(random(60_000, 2)), false,
                    Duration.ofSeconds(5))).isInstanceOf(StoreException.class).hasMessageContaining("quota");
            assertThat(door.writes().flush(Duration.ofSeconds(5)).complete()).isTrue();
            assertThat(tracking.count(TrackingStore.Op.PUT)).as("nothing reached the store").isZero();

            // an hour later it is gone
            Path file = tmp.resolve("scratch/tmp/features/a.npy");
            Files.setLastModifiedTime(file, FileTime.from(Instant.now().minus(Duration.ofHours(1))));
            scratch.sweep();
            assertThatThrownBy(() -> door.get(GetRequest.whole(a))).isInstanceOf(dev.ferry.store.ObjectNotFoundException.class);
        }
    }

    @Test
    void aWriteNotUploadedYet_isReadFromItsLocalCopy_andACachedOnlyReadOfItIsNull() throws Exception {
        try (TierStack stack = stack(true)) {
            NodeStores door = stack.door(null);
            ObjectKey key = ObjectKey.of("data", "ckpt/step-1");
            faulty.failNext(100_000, FaultyStore.slowDown()); // the store throttles: the upload waits
            byte[] bytes = random(300_000, 3);
            NodeStores.Written w = door.put(key, PutBody.ofBytes(bytes), false, Duration.ofSeconds(5));
            assertThat(w.durable()).isFalse();
            assertThat(door.writes().pending(key)).isTrue();
            assertThat(door.onlyLocal(key)).isTrue();
            assertThat(door.writes().pendingIn("data", "ckpt/")).extracting(p -> p.key()).containsExactly("ckpt/step-1");
            assertThat(door.get(GetRequest.whole(key)).readAllBytes()).isEqualTo(bytes);
            assertThat(door.get(GetRequest.whole(key).reaching(GetRequest.Reach.CACHED))).isNull();
            assertThat(door.writes().heldIn("data")).isTrue();

            faulty.heal();
            assertThat(door.writes().flush(Duration.ofSeconds(30)).complete()).isTrue();
            assertThat(door.writes().pending(key)).isFalse();
            assertThat(door.onlyLocal(key)).isFalse();
            assertThat(door.below().readBytes(key, null)).isEqualTo(bytes);
        }
    }

    @Test
    void aWriteThrough_behindAWriteStillLocal_waitsForTheFence_andLandsAfterIt() throws Exception {
        try (TierStack stack = stack(true)) {
            NodeStores door = stack.door(null);
            ObjectKey key = ObjectKey.of("data", "model.bin");
            faulty.failNext(100_000, FaultyStore.slowDown());
            door.put(key, PutBody.ofBytes(random(1000, 4)), false, Duration.ofSeconds(5));
            byte[] second = random(2000, 5);
            CompletableFuture<NodeStores.Written> through = CompletableFuture.supplyAsync(() -> {
                try {
                    return door.put(key, PutBody.ofBytes(second), true, Duration.ofSeconds(60));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, Executors.newVirtualThreadPerTaskExecutor());
            Await.until("the write through waits at write-back's fence", Duration.ofSeconds(10), () -> stack.writeBack().fencesWaiting() > 0);
            assertThat(through).as("not answered while the earlier write is only local").isNotDone();
            faulty.heal();
            NodeStores.Written w = through.get(60, TimeUnit.SECONDS);
            assertThat(w.durable()).as("through: durable when answered").isTrue();
            assertThat(door.writes().pending(key)).isFalse();
            assertThat(door.below().readBytes(key, null)).as("the later write is the one the store keeps").isEqualTo(second);
        }
    }

    @Test
    void aReadThatMayNotFetch_isAnsweredFromBlocksOnDisk_orNotAtAll() throws Exception {
        try (TierStack stack = stack(false)) {
            NodeStores door = stack.door(null);
            ObjectKey key = ObjectKey.of("data", "shard-0.tar");
            byte[] bytes = random(3 << 20, 6);
            door.below().put(key, PutBody.ofBytes(bytes));
            GetRequest whole = GetRequest.whole(key);
            assertThat(door.get(whole.reaching(GetRequest.Reach.CACHED))).as("nothing on disk yet").isNull();
            assertThat(tracking.count(TrackingStore.Op.GET)).as("and nothing asked of the store").isZero();
            assertThat(door.get(whole).readAllBytes()).isEqualTo(bytes);
            long gets = tracking.count(TrackingStore.Op.GET);
            try (ObjectContent resident = door.get(whole.reaching(GetRequest.Reach.CACHED))) {
                assertThat(resident).isNotNull();
                assertThat(resident.readAllBytes()).isEqualTo(bytes);
            }
            assertThat(tracking.count(TrackingStore.Op.GET)).isEqualTo(gets);
            assertThat(door.hints().freshMeta(key)).isNotNull();
            assertThat(door.writesBack(false)).isFalse();
            assertThat(door.writes().flush(Duration.ofSeconds(1))).as("write-through: the fence holds at once").isNotNull();
        }
    }
}
