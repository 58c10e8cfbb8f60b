package dev.ferry.store.chain;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.AbstractObjectStoreContractTest;
import dev.ferry.store.ByteRange;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The standard chain over a directory, with 64 KiB parts so that most reads of the contract are split. */
class ParallelReadStoreContractTest extends AbstractObjectStoreContractTest {
    @TempDir
    static Path root;
    static FileObjectStore files;
    static TrackingStore tracking;
    static StoreChain chain;

    @BeforeAll
    static void start() throws IOException {
        files = new FileObjectStore(root);
        files.createBucket("contract");
        tracking = new TrackingStore(files);
        chain = StoreChain.over(tracking, ChainConfig.DEFAULT.withParallelRead(new ParallelReadConfig(64 * 1024, 4)));
    }

    @Override
    protected ObjectStore store() {
        return chain;
    }

    @Override
    protected String bucket() {
        return "contract";
    }

    @Test
    void longRead_isSplitIntoPinnedParts_andMetered() throws IOException {
        byte[] data = new byte[300 * 1024];
        new Random(3).nextBytes(data);
        ObjectKey key = key("split.bin");
        ObjectMeta meta = chain.put(key, PutBody.ofBytes(data));
        tracking.reset();
        long getsBefore = chain.meter().snapshot().requests(MeteredStore.Op.GET);
        assertThat(chain.readBytes(key, ByteRange.of(10, 250 * 1024))).isEqualTo(java.util.Arrays.copyOfRange(data, 10, 10 + 250 * 1024));
        // 250 KiB in 64 KiB parts: 4 GETs, the first unpinned, the rest pinned to its ETag
        assertThat(tracking.calls()).extracting(TrackingStore.Call::range).containsExactlyInAnyOrder(
                ByteRange.of(10, 65536), ByteRange.of(10 + 65536, 65536), ByteRange.of(10 + 2 * 65536, 65536),
                ByteRange.of(10 + 3 * 65536, 250 * 1024 - 3 * 65536));
        assertThat(chain.meter().snapshot().requests(MeteredStore.Op.GET) - getsBefore).isEqualTo(4);
        assertThat(meta.etag()).isNotEmpty();
    }

    @Test
    void readsOverTheMemoryBudget_streamTheirParts_andEveryByteIsRight() throws IOException {
        byte[] data = new byte[300 * 1024 + 7];
        new Random(4).nextBytes(data);
        ObjectKey key = key("budget.bin");
        files.put(key, PutBody.ofBytes(data));
        // 64 KiB parts, 4 ahead per read, but room for 2 parts in all: three readers share it
        try (ParallelReadStore store = new ParallelReadStore(files, new ParallelReadConfig(64 * 1024, 4, 128 * 1024))) {
            java.util.List<dev.ferry.store.ObjectContent> reads = new java.util.ArrayList<>();
            java.util.List<java.io.ByteArrayOutputStream> got = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) {
                reads.add(store.get(new dev.ferry.store.GetRequest(key, null, null)));
                got.add(new java.io.ByteArrayOutputStream());
            }
            byte[] buf = new byte[10_000];
            boolean more = true;
            while (more) { // interleaved, a little of each at a time
                more = false;
                for (int i = 0; i < 3; i++) {
                    int n = reads.get(i).stream().read(buf);
                    if (n > 0) {
                        got.get(i).write(buf, 0, n);
                        more = true;
                    }
                    assertThat(store.bufferedBytes()).isLessThanOrEqualTo(128 * 1024);
                }
            }
            for (int i = 0; i < 3; i++) {
                assertThat(got.get(i).toByteArray()).isEqualTo(data);
                reads.get(i).close();
            }
            assertThat(store.bufferedBytes()).as("every part's room given back").isZero();
            dev.ferry.store.ObjectContent left = store.get(new dev.ferry.store.GetRequest(key, null, null));
            left.stream().readNBytes(100);
            left.close(); // a reader that leaves early gives its parts' room back too
            assertThat(store.bufferedBytes()).isZero();
        }
    }
}
