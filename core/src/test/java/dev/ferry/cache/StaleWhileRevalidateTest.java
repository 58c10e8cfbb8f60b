package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.cache.policy.Policies;
import dev.ferry.settings.Codec;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.PutBody;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.TrackingStore.Op;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.ManualClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Metadata older than the TTL but younger than twice it is served as it is and revalidated in the background
 * (issue 26): a warm read sends nothing in front of it, and a change made upstream is seen by every read that
 * starts twice the TTL after it, or once the revalidation is back. On simulated time, with the background work
 * run when the test says: nothing here depends on speed.
 */
class StaleWhileRevalidateTest {
    static final Duration TTL = Duration.ofSeconds(10);

    @TempDir
    Path tmp;
    FileObjectStore origin;
    TrackingStore tracking;
    ManualClock clock = new ManualClock();
    Queue<Runnable> background = new ArrayDeque<>();
    CachingStore cache;
    ObjectKey key = ObjectKey.of("data", "img/0001.jpg");

    @BeforeEach
    void setUp() throws IOException {
        origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        origin.put(key, PutBody.ofBytes(bytes("version one")));
        tracking = new TrackingStore(origin);
        open(TTL);
    }

    private void open(Duration ttl) {
        Executor queued = background::add;
        cache = new CachingStore(tracking, CacheConfig.of(tmp.resolve("cache"), 1 << 20).withBlockSize(64 * 1024).withMetadataTtl(ttl),
                Policies.create("lru", List.of()), clock, queued);
    }

    @AfterEach
    void tearDown() throws IOException {
        cache.close();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private String read() throws IOException {
        return new String(cache.readBytes(key, null), StandardCharsets.UTF_8);
    }

    private void runBackground() {
        while (!background.isEmpty()) {
            background.poll().run();
        }
    }

    @Test
    void warmRead_afterTheTtl_sendsNothingInFrontOfIt_andRevalidatesOnceInTheBackground() throws IOException {
        assertThat(read()).isEqualTo("version one");
        clock.advanceMillis(15_000); // past the TTL, within twice it
        tracking.reset();
        assertThat(read()).isEqualTo("version one");
        assertThat(read()).isEqualTo("version one");
        assertThat(cache.freshMeta(key)).isNotNull();
        assertThat(tracking.total()).as("requests in front of warm reads of stale metadata").isZero();
        assertThat(background).as("one revalidation per key, however many reads").hasSize(1);
        runBackground();
        assertThat(tracking.count(Op.HEAD)).isEqualTo(1);
        assertThat(tracking.count(Op.GET)).isZero();
        tracking.reset();
        assertThat(read()).isEqualTo("version one");
        assertThat(tracking.total()).isZero();
        assertThat(background).as("the revalidation made it fresh again").isEmpty();
    }

    @Test
    void replacedUpstream_isSeenOnceRevalidated_andAlwaysWithinTwiceTheTtl() throws IOException {
        assertThat(read()).isEqualTo("version one");
        origin.put(key, PutBody.ofBytes(bytes("version two"))); // behind ferry's back
        clock.advanceMillis(9_000);
        assertThat(read()).as("within the TTL").isEqualTo("version one");
        clock.advanceMillis(6_000);
        assertThat(read()).as("stale, served while revalidating").isEqualTo("version one");
        runBackground();
        assertThat(read()).as("once the revalidation is back").isEqualTo("version two");
        assertThat(cache.stats().evictedStale()).as("the old version's block was dropped").isPositive();

        // with no revalidation back in time (a slow store, say), twice the TTL bounds the staleness
        origin.put(key, PutBody.ofBytes(bytes("version three")));
        clock.advanceMillis(15_000);
        assertThat(read()).isEqualTo("version two");
        background.clear(); // lost
        clock.advanceMillis(5_000); // twice the TTL since the metadata was fetched
        tracking.reset();
        assertThat(read()).isEqualTo("version three");
        assertThat(tracking.count(Op.HEAD) + tracking.count(Op.GET)).as("asked in front of the read").isPositive();
    }

    @Test
    void deletedUpstream_isNotFoundOnceRevalidated() throws IOException {
        assertThat(read()).isEqualTo("version one");
        origin.delete(key);
        clock.advanceMillis(15_000);
        assertThat(read()).isEqualTo("version one");
        runBackground();
        assertThatThrownBy(this::read).isInstanceOf(ObjectNotFoundException.class);
        assertThat(cache.stats().residentBlocks()).isZero();
    }

    @Test
    void aWriteThroughFerry_isNotUndoneByARevalidationAnsweredBeforeIt() throws IOException {
        cache.close();
        Runnable[] afterHead = new Runnable[1];
        tracking = new TrackingStore(new ForwardingObjectStore(origin) {
            @Override
            public ObjectMeta head(ObjectKey k) throws IOException {
                ObjectMeta answer = super.head(k);
                Runnable hook = afterHead[0];
                afterHead[0] = null;
                if (hook != null) {
                    hook.run();
                }
                return answer;
            }
        });
        open(TTL);
        assertThat(read()).isEqualTo("version one");
        clock.advanceMillis(15_000);
        assertThat(read()).isEqualTo("version one"); // a revalidation is queued
        afterHead[0] = () -> { // its HEAD answers "version one", then a write through ferry lands before the answer is used
            try {
                cache.put(key, PutBody.ofBytes(bytes("written through ferry")));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        };
        runBackground();
        assertThat(read()).as("read-after-write").isEqualTo("written through ferry");
    }

    @Test
    void ttlZero_asksInFrontOfEveryRead() throws IOException {
        cache.close();
        open(Duration.ZERO);
        assertThat(read()).isEqualTo("version one");
        tracking.reset();
        assertThat(read()).isEqualTo("version one");
        assertThat(tracking.count(Op.HEAD)).isEqualTo(1);
        assertThat(background).isEmpty();
    }

    @Test
    void ttlIndefinite_neverAsksAgain_yetAWriteThroughFerryIsSeenAtOnce() throws IOException {
        cache.close();
        open(Codec.INDEFINITE);
        assertThat(read()).isEqualTo("version one");
        origin.put(key, PutBody.ofBytes(bytes("version two"))); // behind ferry's back: what indefinite promises won't happen
        clock.advanceMillis(Duration.ofDays(3650).toMillis());
        tracking.reset();
        assertThat(read()).as("ten years on, still the version read").isEqualTo("version one");
        assertThat(tracking.total()).as("requests to the store for a warm read").isZero();
        assertThat(background).as("no revalidation either").isEmpty();

        cache.put(key, PutBody.ofBytes(bytes("written through ferry")));
        assertThat(read()).as("read-after-write").isEqualTo("written through ferry");
    }

    /** {@code n} small objects img/00000.jpg, img/00001.jpg... put in the origin. */
    private List<ObjectKey> folderOfSmallObjects(int n) throws IOException {
        List<ObjectKey> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ObjectKey k = ObjectKey.of("data", String.format("img/%05d.jpg", i));
            origin.put(k, PutBody.ofBytes(bytes("object " + i)));
            keys.add(k);
        }
        return keys;
    }

    private void readAll(List<ObjectKey> keys) throws IOException {
        for (ObjectKey k : keys) {
            cache.readBytes(k, null);
        }
    }

    @Test
    void aFolderOfSmallObjects_isRevalidatedByOneListPagePerThousand_notAHeadEach() throws IOException {
        List<ObjectKey> keys = folderOfSmallObjects(2_500);
        readAll(keys);
        clock.advanceMillis(15_000);
        tracking.reset();
        readAll(keys);
        assertThat(tracking.total()).as("requests in front of warm reads of stale metadata").isZero();
        runBackground();
        assertThat(tracking.count(Op.LIST)).as("LIST pages for 2,500 objects").isEqualTo(3);
        assertThat(tracking.count(Op.HEAD)).isZero();
        tracking.reset();
        readAll(keys);
        assertThat(tracking.total()).isZero();
        assertThat(background).as("the sweep made every entry fresh again").isEmpty();
    }

    @Test
    void aSweep_seesAnObjectReplacedOrDeletedBehindFerrysBack() throws IOException {
        List<ObjectKey> keys = folderOfSmallObjects(100);
        readAll(keys);
        origin.put(keys.get(7), PutBody.ofBytes(bytes("replaced"))); // behind ferry's back
        origin.delete(keys.get(8));
        clock.advanceMillis(15_000);
        readAll(keys);
        tracking.reset();
        runBackground();
        assertThat(tracking.count(Op.LIST)).isEqualTo(1);
        assertThat(tracking.count(Op.HEAD)).as("the one the listing did not name").isEqualTo(1);
        assertThat(new String(cache.readBytes(keys.get(7), null), StandardCharsets.UTF_8)).isEqualTo("replaced");
        assertThatThrownBy(() -> cache.readBytes(keys.get(8), null)).isInstanceOf(ObjectNotFoundException.class);
        assertThat(cache.stats().evictedStale()).as("the old versions' blocks were dropped").isPositive();
    }

    @Test
    void aFolderWhosePagesNameFewOfTheObjectsRead_isRevalidatedByHeads_afterOnePage() throws IOException {
        List<ObjectKey> keys = folderOfSmallObjects(1_500);
        List<ObjectKey> read = keys.subList(1_200, 1_240); // beyond the first page: a page renews none of them
        readAll(read);
        clock.advanceMillis(15_000);
        readAll(read);
        tracking.reset();
        runBackground();
        assertThat(tracking.count(Op.LIST)).as("the page that did not pay ends the sweep").isEqualTo(1);
        assertThat(tracking.count(Op.HEAD)).isEqualTo(40);
        clock.advanceMillis(15_000);
        readAll(read);
        tracking.reset();
        runBackground();
        assertThat(tracking.count(Op.LIST)).as("one page that does not pay per round, not one per object").isEqualTo(1);
        assertThat(tracking.count(Op.HEAD)).isEqualTo(40);
    }
}
