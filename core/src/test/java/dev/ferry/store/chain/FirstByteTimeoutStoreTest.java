package dev.ferry.store.chain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.LatencyStore;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FirstByteTimeoutStoreTest {
    /**
     * A call refused at a 200 ms limit ends before this many ms: far below the 60 s the store would hold it, and
     * with room for a loaded machine to schedule the timer late (never earlier than the limit: the lower bound).
     */
    static final double LATE_MILLIS = 10_000;

    @TempDir
    Path root;
    FileObjectStore folder;
    final ObjectKey key = ObjectKey.of("bkt", "k");
    final List<Thread> started = new CopyOnWriteArrayList<>();
    final ThreadFactory threads = r -> {
        Thread t = Thread.ofVirtual().unstarted(r);
        started.add(t);
        return t;
    };

    @BeforeEach
    void object() throws IOException {
        folder = new FileObjectStore(root);
        folder.createBucket("bkt");
        folder.put(key, PutBody.ofBytes(new byte[] {1, 2, 3}));
    }

    @Test
    void aStoreThatAnswersInTime_isPassedThrough_answersAndFailures() throws IOException {
        FirstByteTimeoutStore store = new FirstByteTimeoutStore(new LatencyStore(folder, 10), Duration.ofSeconds(5), threads, Clock.system());
        assertThat(store.head(key).size()).isEqualTo(3);
        try (ObjectContent c = store.get(new GetRequest(key, null, null))) {
            assertThat(c.stream().readAllBytes()).containsExactly(1, 2, 3);
        }
        assertThatThrownBy(() -> store.head(ObjectKey.of("bkt", "missing"))).isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void aStoreThatDoesNotAnswer_failsRetryably_atTheLimit_andTheCallIsInterrupted() throws Exception {
        FirstByteTimeoutStore store = new FirstByteTimeoutStore(new LatencyStore(folder, 60_000), Duration.ofMillis(200), threads, Clock.system());
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> store.head(key)).isInstanceOf(StoreException.class)
                .hasMessage("HEAD s3://bkt/k: no answer within 200 ms (first-byte timeout)")
                .satisfies(e -> assertThat(((StoreException) e).kind()).isEqualTo(StoreException.Kind.RETRYABLE));
        assertThat((System.nanoTime() - t0) / 1e6).isBetween(190.0, LATE_MILLIS);
        started.get(0).join(Duration.ofSeconds(2));
        assertThat(started.get(0).isAlive()).as("the call below was interrupted, not left waiting 60 s").isFalse();
    }

    @Test
    void anAnswerThatComesTooLate_isClosed() throws Exception {
        AtomicBoolean closed = new AtomicBoolean();
        ObjectStore tracking = new ForwardingObjectStore(folder) {
            @Override
            public ObjectContent get(GetRequest request) throws IOException {
                ObjectContent c = delegate.get(request);
                return new ObjectContent(c.meta(), c.range(), new FilterInputStream(c.stream()) {
                    @Override
                    public void close() throws IOException {
                        closed.set(true);
                        super.close();
                    }
                });
            }
        };
        // a call that answers after the limit whatever the interrupt, as one stuck in an uninterruptible read would
        ThreadFactory deaf = r -> {
            Thread t = Thread.ofPlatform().unstarted(() -> {
                long end = System.nanoTime() + 300_000_000L;
                while (System.nanoTime() < end) {
                    LockSupport.parkNanos(end - System.nanoTime());
                }
                Thread.interrupted();
                r.run();
            });
            started.add(t);
            return t;
        };
        FirstByteTimeoutStore store = new FirstByteTimeoutStore(tracking, Duration.ofMillis(100), deaf, Clock.system());
        assertThatThrownBy(() -> store.get(new GetRequest(key, null, null))).isInstanceOf(StoreException.class);
        started.get(0).join(Duration.ofSeconds(5));
        assertThat(closed).as("the late answer's stream").isTrue();
    }

    /** A store that reads a PUT's body {@code chunk} bytes at a time, {@code pauseMillis} apart, then waits {@code answerMillis}. */
    private ObjectStore slowWriter(int chunk, long pauseMillis, long answerMillis) {
        return new ForwardingObjectStore(folder) {
            @Override
            public ObjectMeta put(ObjectKey k, PutBody body) throws IOException {
                try (InputStream in = body.open()) {
                    ByteArrayOutputStream copy = new ByteArrayOutputStream();
                    byte[] buffer = new byte[chunk];
                    for (int n; (n = in.read(buffer)) >= 0; ) {
                        copy.write(buffer, 0, n);
                        sleep(pauseMillis);
                    }
                    sleep(answerMillis);
                    return delegate.put(k, PutBody.ofBytes(copy.toByteArray()));
                }
            }

            @Override
            public void delete(ObjectKey k) throws IOException {
                sleep(answerMillis);
                delegate.delete(k);
            }
        };
    }

    private static void sleep(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted");
        }
    }

    @Test
    void aPutThatKeepsSendingItsBody_isNotCut_howeverLongItTakes() throws IOException {
        // 125 chunks 20 ms apart: 2.5 s in all, two and a half times the limit, never near 1 s without progress
        // (the gap is far below the limit so that a loaded machine's scheduling delays cannot look like a stall)
        FirstByteTimeoutStore store = new FirstByteTimeoutStore(slowWriter(8, 20, 0), Duration.ofSeconds(1), threads, Clock.system());
        store.put(ObjectKey.of("bkt", "slow"), PutBody.ofBytes(new byte[1000]));
        assertThat(folder.head(ObjectKey.of("bkt", "slow")).size()).isEqualTo(1000);
    }

    @Test
    void aPutOrDeleteTheStoreDoesNotAnswer_failsRetryably_atTheLimit() throws Exception {
        FirstByteTimeoutStore store = new FirstByteTimeoutStore(slowWriter(1 << 16, 0, 60_000), Duration.ofMillis(200), threads, Clock.system());
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> store.put(ObjectKey.of("bkt", "hung"), PutBody.ofBytes(new byte[1000])))
                .isInstanceOf(StoreException.class)
                .hasMessage("PUT s3://bkt/hung: the store took no bytes and gave no answer for 200 ms (first-byte timeout)")
                .satisfies(e -> assertThat(((StoreException) e).kind()).isEqualTo(StoreException.Kind.RETRYABLE));
        assertThat((System.nanoTime() - t0) / 1e6).isBetween(190.0, LATE_MILLIS);
        t0 = System.nanoTime();
        assertThatThrownBy(() -> store.delete(key)).isInstanceOf(StoreException.class)
                .hasMessage("DELETE s3://bkt/k: no answer within 200 ms (first-byte timeout)");
        assertThat((System.nanoTime() - t0) / 1e6).isBetween(190.0, LATE_MILLIS);
        for (Thread t : started) {
            t.join(Duration.ofSeconds(2));
            assertThat(t.isAlive()).as("the call below was interrupted, not left waiting 60 s").isFalse();
        }
    }
}
