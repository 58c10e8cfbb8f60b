package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.BucketOperations;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.ManualClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The store's buckets as the mount's top folder: how long their list is trusted, over a real folder store. */
class FoldersTest {
    private FileObjectStore store;
    private final AtomicInteger listed = new AtomicInteger();
    private final ManualClock clock = new ManualClock();

    @BeforeEach
    void store(@TempDir Path dir) throws IOException {
        store = new FileObjectStore(dir);
        store.createBucket("data");
    }

    /** The store's bucket operations, counting how often its buckets are asked for. */
    private BucketOperations counted() {
        return new BucketOperations() {
            @Override
            public List<Bucket> listBuckets() throws IOException {
                listed.incrementAndGet();
                return store.listBuckets();
            }

            @Override
            public void createBucket(String bucket) throws IOException {
                store.createBucket(bucket);
            }

            @Override
            public void deleteBucket(String bucket) throws IOException {
                store.deleteBucket(bucket);
            }
        };
    }

    private Folders folders(Duration ttl) throws IOException {
        return new Folders(store, clock, ttl, null, counted(), null, new Attrs(true));
    }

    @Test
    void aBucketTheListNamed_isTrustedForTheMetadataTtl_soAWalkAfterAPauseAsksNoListOfBuckets() throws IOException {
        Folders folders = folders(Duration.ofSeconds(60));
        assertThat(folders.bucketExists("data")).isTrue();
        clock.advanceMillis(30_000);
        assertThat(folders.bucketExists("data")).isTrue();
        assertThat(listed).as("within metadata-ttl").hasValue(1);
        clock.advanceMillis(31_000);
        assertThat(folders.bucketExists("data")).isTrue();
        assertThat(listed).as("past metadata-ttl").hasValue(2);
    }

    @Test
    void aNameTheListLacks_isAskedAgainAtOnce_andAShortTtlStillKeepsTheListTwoSeconds() throws IOException {
        Folders folders = folders(Duration.ZERO);
        assertThat(folders.bucketExists("data")).isTrue();
        assertThat(folders.bucketExists("data")).isTrue();
        assertThat(listed).as("metadata-ttl 0: the list kept 2 s").hasValue(1);
        store.createBucket("made-elsewhere");
        assertThat(folders.bucketExists("made-elsewhere")).as("a bucket made behind the mount's back").isTrue();
        assertThat(folders.bucketExists("never")).isFalse();
        assertThat(listed).hasValue(3);
        clock.advanceMillis(2_001);
        assertThat(folders.bucketExists("data")).isTrue();
        assertThat(listed).hasValue(4);
    }
}
