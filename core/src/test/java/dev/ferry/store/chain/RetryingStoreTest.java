package dev.ferry.store.chain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.ByteRange;
import dev.ferry.store.FaultyStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.ManualClock;
import java.io.IOException;
import java.net.SocketException;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RetryingStoreTest {
    @TempDir
    Path root;
    FileObjectStore files;
    FaultyStore faulty;
    TrackingStore tracking;
    ManualClock clock = new ManualClock();
    RetryingStore store;
    ObjectKey key = ObjectKey.of("bkt", "data/obj");
    byte[] data = new byte[100_000];

    @BeforeEach
    void setUp() throws IOException {
        files = new FileObjectStore(root);
        files.createBucket("bkt");
        new Random(7).nextBytes(data);
        files.put(key, PutBody.ofBytes(data));
        faulty = new FaultyStore(files);
        tracking = new TrackingStore(faulty);
        store = new RetryingStore(tracking, new RetryPolicy(4, java.time.Duration.ofMillis(100), java.time.Duration.ofSeconds(1)),
                clock, new Random(1));
    }

    @Test
    void head_afterTwoSlowDowns_succeedsOnThirdAttempt() throws IOException {
        faulty.failNext(2, FaultyStore.slowDown());
        assertThat(store.head(key).size()).isEqualTo(data.length);
        assertThat(tracking.count(TrackingStore.Op.HEAD)).isEqualTo(3);
        assertThat(store.retries()).isEqualTo(2);
        // full jitter: each wait is at most 100 ms, then 200 ms
        assertThat(clock.sleptNanos()).isLessThanOrEqualTo(300_000_000L);
    }

    @Test
    void head_notFound_isNotRetried() {
        assertThatThrownBy(() -> store.head(ObjectKey.of("bkt", "nope"))).isInstanceOf(ObjectNotFoundException.class);
        assertThat(tracking.count(TrackingStore.Op.HEAD)).isEqualTo(1);
    }

    @Test
    void accessDenied_isNotRetried() {
        faulty.failNext(1, new StoreException(StoreException.Kind.ACCESS_DENIED, 403, "AccessDenied", null));
        assertThatThrownBy(() -> store.head(key)).isInstanceOf(StoreException.class)
                .satisfies(e -> assertThat(((StoreException) e).kind()).isEqualTo(StoreException.Kind.ACCESS_DENIED));
        assertThat(tracking.count(TrackingStore.Op.HEAD)).isEqualTo(1);
    }

    @Test
    void persistentServerErrors_giveUpAfterMaxAttempts_withOneSentence() {
        faulty.failNext(10, FaultyStore.serverError());
        assertThatThrownBy(() -> store.head(key)).isInstanceOf(StoreException.class)
                .hasMessageStartingWith("HEAD s3://bkt/data/obj failed after 4 attempts");
        assertThat(tracking.count(TrackingStore.Op.HEAD)).isEqualTo(4);
    }

    @Test
    void connectionReset_isRetried() throws IOException {
        faulty.failNext(1, new SocketException("Connection reset"));
        assertThat(store.readBytes(key, null)).isEqualTo(data);
        assertThat(tracking.count(TrackingStore.Op.GET)).isEqualTo(2);
    }

    @Test
    void streamBrokenMidway_resumesFromWhereItStopped_pinnedToEtag() throws IOException {
        faulty.breakStreams(2, 30_000);
        assertThat(store.readBytes(key, null)).isEqualTo(data);
        // first open, then a resume after 30,000 bytes, then another after 60,000
        assertThat(tracking.calls()).extracting(TrackingStore.Call::range)
                .containsExactly(null, ByteRange.of(30_000, 70_000), ByteRange.of(60_000, 40_000));
    }

    @Test
    void streamBroken_andObjectReplaced_failsRatherThanSplicingVersions() throws IOException {
        faulty.breakStreams(1, 10_000);
        try (ObjectContent content = store.get(GetRequest.whole(key))) {
            content.stream().readNBytes(10_000);
            files.put(key, PutBody.ofBytes(new byte[data.length]));
            assertThatThrownBy(() -> content.stream().readAllBytes()).isInstanceOf(StoreException.class)
                    .satisfies(e -> assertThat(((StoreException) e).kind()).isEqualTo(StoreException.Kind.PRECONDITION_FAILED));
        }
    }

    @Test
    void backoffCaps_growExponentiallyToMax() {
        RetryPolicy policy = new RetryPolicy(10, java.time.Duration.ofMillis(50), java.time.Duration.ofMillis(300));
        assertThat(policy.capNanos(1)).isEqualTo(50_000_000L);
        assertThat(policy.capNanos(2)).isEqualTo(100_000_000L);
        assertThat(policy.capNanos(3)).isEqualTo(200_000_000L);
        assertThat(policy.capNanos(4)).isEqualTo(300_000_000L);
        assertThat(policy.capNanos(60)).isEqualTo(300_000_000L);
    }
}
