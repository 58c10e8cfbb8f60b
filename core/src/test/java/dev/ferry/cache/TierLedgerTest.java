package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.metrics.ReadSources;
import dev.ferry.metrics.ReadTally;
import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger hears where every read's bytes came from: a block resident before the epoch began, one prefetched after
 * it began and before the read, and one the read waited for, each counted once per read; and every block fetched, as
 * a prefetch or for a reader, with its request.
 */
class TierLedgerTest {
    static final int BLOCK = 64 * 1024;

    @TempDir
    Path tmp;

    @Test
    void readsAreSplitIntoResidentPrefetchedAndWaited_andFetchesAreTold() throws IOException {
        try (FileObjectStore origin = new FileObjectStore(tmp.resolve("origin"))) {
            origin.createBucket("data");
            byte[] bytes = new byte[6 * BLOCK];
            new Random(3).nextBytes(bytes);
            ObjectKey key = ObjectKey.of("data", "shard");
            String etag = origin.put(key, PutBody.ofBytes(bytes)).etag();
            try (CachingStore cache = new CachingStore(origin, CacheConfig.of(tmp.resolve("cache"), 64L * BLOCK).withBlockSize(BLOCK),
                    Clock.system())) {
                read(cache, key, 0, 2); // blocks 0 and 1: resident before the epoch
                ReadTally tally = new ReadTally();
                AtomicLong fetched = new AtomicLong();
                AtomicLong prefetched = new AtomicLong();
                AtomicLong requests = new AtomicLong();
                long epochStart = cache.clock().nanoTime();
                cache.ledger(new TierLedger() {
                    @Override
                    public void served(BlockId block, long n, long arrivedNanos, boolean first) {
                        tally.served(n, arrivedNanos, first, epochStart);
                    }

                    @Override
                    public void fetched(BlockId block, long n, boolean prefetch, boolean request) {
                        (prefetch ? prefetched : fetched).addAndGet(n);
                        requests.addAndGet(request ? 1 : 0);
                    }
                });
                cache.prefetch(new GetRequest(key, ByteRange.of(2L * BLOCK, 2L * BLOCK), etag)); // blocks 2 and 3, in time
                read(cache, key, 0, 6); // 0-1 resident, 2-3 prefetched, 4-5 waited for

                ReadSources s = tally.sources();
                assertThat(s.residentBytes()).isEqualTo(2L * BLOCK);
                assertThat(s.prefetchedBytes()).isEqualTo(2L * BLOCK);
                assertThat(s.waitedBytes()).isEqualTo(2L * BLOCK);
                assertThat(s.residentReads()).isEqualTo(2);
                assertThat(s.prefetchedReads()).isEqualTo(2);
                assertThat(s.waitedReads()).isEqualTo(2);
                assertThat(s.residentShareBytes()).isEqualTo(1 / 3.0, org.assertj.core.data.Offset.offset(1e-9));
                assertThat(s.readyShareBytes()).isEqualTo(2 / 3.0, org.assertj.core.data.Offset.offset(1e-9));
                assertThat(prefetched.get()).isEqualTo(2L * BLOCK);
                assertThat(fetched.get()).isEqualTo(2L * BLOCK);
                assertThat(requests.get()).as("one prefetch, one miss run").isEqualTo(2);

                read(cache, key, 0, 6); // all resident now, but arrived after the epoch began: prefetched or waited no more
                ReadSources again = tally.sources().minus(s);
                assertThat(again.waitedBytes()).isZero();
                assertThat(again.bytes()).isEqualTo(6L * BLOCK);
                assertThat(again.reads()).isEqualTo(6);
            }
        }
    }

    private static void read(CachingStore cache, ObjectKey key, int firstBlock, int blocks) throws IOException {
        try (ObjectContent c = cache.get(new GetRequest(key, ByteRange.of((long) firstBlock * BLOCK, (long) blocks * BLOCK), null))) {
            c.stream().readAllBytes();
        }
    }
}
