package dev.ferry.writeback;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Await;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Write-back's upload engine ({@link Uploader}) through its store: order per key without holding back other keys,
 * refusals bounded and reported, and attempts given up on that land late, after a newer write or a delete, found
 * and repaired before the fence is complete. The store in front of a folder store here keeps a "late" attempt's
 * bytes and applies them when the test says, as a proxy that held the request would.
 */
class UploaderTest {
    @TempDir
    Path tmp;
    FileObjectStore origin;

    @BeforeEach
    void setUp() throws IOException {
        origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("ckpt");
    }

    /**
     * A store whose writes of the keys {@code held} accepts are, the first time each, taken and not answered (a
     * timeout): what was sent is applied later, by {@link #land}, as a delayed delivery would.
     */
    static class LateLandingStore extends ForwardingObjectStore {
        private final Predicate<String> held;
        private final List<Runnable> late = new ArrayList<>();
        private final java.util.Set<String> seen = new java.util.HashSet<>();

        LateLandingStore(ObjectStore delegate, Predicate<String> held) {
            super(delegate);
            this.held = held;
        }

        private synchronized boolean holdThisOne(String what) {
            return held.test(what) && seen.add(what);
        }

        @Override
        public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
            if (holdThisOne("PUT " + key.key())) {
                byte[] bytes;
                try (var in = body.open()) {
                    bytes = in.readAllBytes();
                }
                synchronized (this) {
                    late.add(() -> {
                        try {
                            delegate.put(key, PutBody.ofBytes(bytes));
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    });
                }
                throw new StoreException(StoreException.Kind.RETRYABLE, 0, "PUT " + key + ": read timed out", new SocketTimeoutException());
            }
            return delegate.put(key, body);
        }

        @Override
        public void delete(ObjectKey key) throws IOException {
            if (holdThisOne("DELETE " + key.key())) {
                synchronized (this) {
                    late.add(() -> {
                        try {
                            delegate.delete(key);
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    });
                }
                throw new StoreException(StoreException.Kind.RETRYABLE, 0, "DELETE " + key + ": read timed out", new SocketTimeoutException());
            }
            delegate.delete(key);
        }

        /** Applies every attempt held so far, in the order they were sent. */
        synchronized void land() {
            late.forEach(Runnable::run);
            late.clear();
        }
    }

    /** Writes v1 of {@code key}, whose first attempt the store holds, and waits for its retry to put it in the store. */
    private void v1ByItsRetry(WriteBackStore wb, ObjectKey key) throws Exception {
        wb.write(key, PutBody.ofBytes("v1".getBytes()));
        Await.until("v1 in the store by its retry", Duration.ofSeconds(10), () -> exists(key));
    }

    private WriteBackStore open(ObjectStore store, Duration settle) throws IOException {
        return new WriteBackStore(store, WriteBackConfig.of(tmp.resolve("wb"), 1 << 30).withMaxBackoff(Duration.ofMillis(100))
                .withSettleWindow(settle));
    }

    @Test
    void aLateAttempt_landingAfterTheNewerWrite_isFoundAndRepaired_beforeTheFenceIsComplete() throws Exception {
        LateLandingStore late = new LateLandingStore(origin, what -> what.equals("PUT step"));
        ObjectKey key = ObjectKey.of("ckpt", "step");
        try (WriteBackStore wb = open(late, Duration.ofSeconds(3))) { // longer than the test takes to land the late attempt
            v1ByItsRetry(wb, key);
            wb.write(key, PutBody.ofBytes("v2".getBytes()));
            // v2 in the store, and the uploader told of it (a moment after the store has it): both writes settling
            Await.until("v2 uploaded and settling", Duration.ofSeconds(10),
                    () -> new String(origin.readBytes(key, null)).equals("v2") && wb.stats().settling() == 2);
            assertThat(wb.flush(Duration.ofMillis(100)).writes()).as("uploaded, not durable yet")
                    .allSatisfy(w -> assertThat(w.durability()).isEqualTo(Durability.SETTLING));
            late.land(); // v1's first attempt arrives now, over v2
            assertThat(new String(origin.readBytes(key, null))).isEqualTo("v1");
            assertThat(new String(wb.readBytes(key, null))).as("reads see the newest acknowledged write meanwhile").isEqualTo("v2");
            FlushResult r = wb.flush(Duration.ofSeconds(30));
            assertThat(r.complete()).isTrue();
            assertThat(new String(origin.readBytes(key, null))).as("repaired before the fence said complete").isEqualTo("v2");
            assertThat(wb.stats().repaired()).isEqualTo(1);
        }
    }

    @Test
    void aLateAttempt_landingAfterADelete_isDeletedAgain() throws Exception {
        LateLandingStore late = new LateLandingStore(origin, what -> what.equals("PUT gone"));
        ObjectKey key = ObjectKey.of("ckpt", "gone");
        try (WriteBackStore wb = open(late, Duration.ofSeconds(3))) { // longer than the test takes to land the late attempt
            v1ByItsRetry(wb, key);
            wb.delete(key);
            // the delete made in the store, and the uploader told of it (a moment after): the write and the delete settling
            Await.until("the delete made and settling", Duration.ofSeconds(10), () -> !exists(key) && wb.stats().settling() == 2);
            assertThat(wb.stats().settling()).as("the write and the delete after it, uploaded, not durable yet").isEqualTo(2);
            late.land();
            assertThat(exists(key)).as("the late attempt brought the key back").isTrue();
            assertThatThrownBy(() -> wb.head(key)).as("reads see the delete meanwhile").isInstanceOf(ObjectNotFoundException.class);
            assertThat(wb.flush(Duration.ofSeconds(30)).complete()).isTrue();
            assertThat(exists(key)).isFalse();
            assertThat(wb.stats().repaired()).isEqualTo(1);
        }
    }

    @Test
    void aSettlingWrite_whoseNewerWriteIsRefused_isOwedNothing_andTheFenceReportsTheRefusalAtOnce() throws Exception {
        ObjectKey key = ObjectKey.of("ckpt", "refused-later");
        ObjectStore store = new LateLandingStore(origin, what -> what.equals("PUT refused-later")) {
            private int puts;

            @Override
            public ObjectMeta put(ObjectKey k, PutBody body) throws IOException {
                if (++puts == 3) { // v1's held attempt, v1's retry, then v2
                    throw new StoreException(StoreException.Kind.ACCESS_DENIED, 403, "AccessDenied", "PUT " + k + ": 403 AccessDenied", null);
                }
                return super.put(k, body);
            }
        };
        try (WriteBackStore wb = open(store, Duration.ofHours(1))) {
            wb.write(key, PutBody.ofBytes("v1".getBytes()));
            Await.until("v1 uploaded and settling", Duration.ofSeconds(10), () -> wb.stats().settling() == 1);
            wb.write(key, PutBody.ofBytes("v2".getBytes()));
            FlushResult r = wb.flush(Duration.ofSeconds(20));
            assertThat(r.complete()).isFalse();
            assertThat(r.firstError()).contains("AccessDenied");
            assertThat(r.writes()).extracting(WriteStatus::durability).containsExactly(Durability.SUPERSEDED, Durability.FAILED);
            assertThat(new String(wb.readBytes(key, null))).as("the newest acknowledged write, kept").isEqualTo("v2");
        }
    }

    @Test
    void anAttemptThatNeverReachedTheStore_isNotWaitedOut() throws Exception {
        AtomicInteger refused = new AtomicInteger();
        ObjectStore down = new ForwardingObjectStore(origin) {
            @Override
            public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
                if (refused.getAndIncrement() < 3) {
                    throw new StoreException(StoreException.Kind.RETRYABLE, 0, "PUT " + key + ": connection refused", new ConnectException());
                }
                return delegate.put(key, body);
            }
        };
        try (WriteBackStore wb = open(down, Duration.ofHours(1))) {
            wb.write(ObjectKey.of("ckpt", "k"), PutBody.ofBytes("bytes".getBytes()));
            FlushResult r = wb.flush(Duration.ofSeconds(30));
            assertThat(r.complete()).as("no hour's wait: nothing was sent that could land later").isTrue();
            assertThat(wb.stats().settling()).isZero();
        }
    }

    @Test
    void aKeyTheStoreKeepsRefusing_isReportedFailed_andHoldsBackNoOtherKey() throws Exception {
        ObjectStore refusing = new ForwardingObjectStore(origin) {
            @Override
            public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
                if (key.key().startsWith("poison")) {
                    throw new StoreException(StoreException.Kind.RETRYABLE, 500, "InternalError", "PUT " + key + ": 500 File name too long", null);
                }
                return delegate.put(key, body);
            }
        };
        try (WriteBackStore wb = open(refusing, Duration.ZERO)) {
            List<ObjectKey> good = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                ObjectKey key = ObjectKey.of("ckpt", (i % 10 == 3 ? "poison-" : "good-") + i);
                wb.write(key, PutBody.ofBytes(("bytes " + i).getBytes()));
                if (key.key().startsWith("good")) {
                    good.add(key);
                }
            }
            FlushResult r = wb.flush(Duration.ofSeconds(60));
            assertThat(r.complete()).isFalse();
            assertThat(r.writes()).filteredOn(w -> w.durability() == Durability.FAILED).extracting(w -> w.key().key())
                    .containsExactlyInAnyOrder("poison-3", "poison-13", "poison-23", "poison-33");
            assertThat(r.firstError()).contains("File name too long");
            for (ObjectKey key : good) {
                assertThat(exists(key)).as(key.toString()).isTrue();
            }
            assertThat(wb.stats().failed()).isEqualTo(4);
            assertThat(new String(wb.readBytes(ObjectKey.of("ckpt", "poison-3"), null))).as("a failed write is served").isEqualTo("bytes 3");
            // a later write of a refused key that the store takes replaces it
            ObjectKey renamed = ObjectKey.of("ckpt", "poison-3");
            wb.delete(renamed);
            assertThat(wb.flush(Duration.ofSeconds(30)).writes()).filteredOn(w -> w.key().equals(renamed))
                    .allSatisfy(w -> assertThat(w.durability()).isIn(Durability.SUPERSEDED, Durability.DURABLE));
            assertThat(wb.stats().failed()).isEqualTo(3);
        }
    }

    private boolean exists(ObjectKey key) throws IOException {
        try {
            origin.head(key);
            return true;
        } catch (ObjectNotFoundException e) {
            return false;
        }
    }
}
