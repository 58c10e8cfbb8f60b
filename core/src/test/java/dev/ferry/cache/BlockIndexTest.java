package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.policy.EvictionPolicy;
import dev.ferry.cache.policy.LruPolicy;
import dev.ferry.cache.policy.PinPolicy;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local tier's bookkeeping on its own: reservations, publishing, pins, eviction between the watermarks,
 * versions, the blocks held for one read, and the entries a snapshot carries across a reopen. Block files are
 * real (so deletions can be seen) but hold no real data: the index never reads them.
 */
class BlockIndexTest {
    static final int BLOCK = 4096;
    /** Sixteen blocks; evict past twelve (the high watermark), down to eight (the low one). */
    static final long CAPACITY = 16L * BLOCK;

    @TempDir
    Path tmp;
    CacheLayout layout;
    CacheConfig config;
    CacheCounters counters;
    List<Path> deleted;
    BlockIndex index;
    ObjectKey key = ObjectKey.of("data", "shard-0.tar");

    @BeforeEach
    void setUp() {
        layout = new CacheLayout(tmp.resolve("cache"));
        config = CacheConfig.of(layout.dir(), CAPACITY).withBlockSize(BLOCK).withWatermarks(0.75, 0.5);
        counters = new CacheCounters();
        deleted = new ArrayList<>();
        index = open(new LruPolicy<>());
    }

    BlockIndex open(EvictionPolicy<BlockId> policy) {
        return new BlockIndex(config, layout, policy, counters, deleted::add, dev.ferry.time.Clock.system());
    }

    BlockId block(long i) {
        return new BlockId(key, "v1", i);
    }

    /** Reserves {@code id}, writes its file and publishes it, as a fetch does. */
    BlockEntry put(BlockIndex into, BlockId id, boolean ahead) throws IOException {
        BlockEntry reserved = into.reserve(id, BLOCK, ahead);
        assertThat(reserved).as("reservation of %s", id).isNotNull();
        return publish(into, reserved);
    }

    BlockEntry put(BlockId id) throws IOException {
        return put(index, id, false);
    }

    static BlockEntry publish(BlockIndex into, BlockEntry reserved) throws IOException {
        Files.createDirectories(reserved.path.getParent());
        Files.write(reserved.path, new byte[BLOCK]);
        BlockEntry ready = new BlockEntry(reserved.id, reserved.path, 100L * BLOCK, BLOCK, 0, 0, false);
        ready.ready = true;
        assertThat(into.publish(reserved, ready)).as("publish of %s", reserved.id).isTrue();
        return ready;
    }

    List<Long> residentIndexes(long upTo) {
        return LongStream.range(0, upTo).filter(i -> index.isResident(block(i))).boxed().toList();
    }

    static ObjectMeta meta(ObjectKey key, String etag) {
        return new ObjectMeta(key, 100L * BLOCK, etag, null, Instant.EPOCH);
    }

    @Test
    void reservation_holdsItsRoom_butIsReadableOnlyOncePublished() throws IOException {
        BlockEntry reserved = index.reserve(block(0), BLOCK, false);

        assertThat(reserved).isNotNull();
        assertThat(index.isResident(block(0))).isFalse();
        assertThat(index.pinForRead(block(0), true)).isNull();
        assertThat(index.holdsAnyVersionAt(key, 0)).isTrue();
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(1, BLOCK));
        assertThat(index.readyEntries()).isEmpty();
        assertThat(index.reserve(block(0), BLOCK, false)).as("a second claim of the same block").isNull();

        BlockEntry ready = publish(index, reserved);
        assertThat(index.isResident(block(0))).isTrue();
        assertThat(index.readyEntries()).containsExactly(ready);
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(1, BLOCK));
    }

    @Test
    void releasedReservation_givesItsRoomBack() {
        BlockEntry reserved = index.reserve(block(0), BLOCK, false);

        index.releaseReservation(reserved);

        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(0, 0));
        assertThat(index.holdsAnyVersionAt(key, 0)).isFalse();
        assertThat(index.reserve(block(0), BLOCK, false)).as("free to claim again").isNotNull();
    }

    @Test
    void admissionPastTheHighWatermark_evictsDownToTheLowOne_leastRecentlyUsedFirst() throws IOException {
        List<BlockEntry> entries = new ArrayList<>();
        for (long i = 0; i < 12; i++) {
            entries.add(put(block(i)));
        }
        BlockEntry touched = index.pinForRead(block(0), true); // a hit: block 0 becomes the most recent
        index.unpin(touched);
        assertThat(counters.evictedCapacity.sum()).as("twelve blocks reach the high watermark, no further").isZero();

        put(block(12)); // 12 + 1 > 12 blocks: evict until the newcomer fits under 8, so 7 stay

        assertThat(residentIndexes(13)).containsExactly(0L, 6L, 7L, 8L, 9L, 10L, 11L, 12L);
        assertThat(counters.evictedCapacity.sum()).isEqualTo(5);
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(8, 8L * BLOCK));
        List<Path> victims = entries.subList(1, 6).stream().map(e -> e.path).toList();
        assertThat(deleted).as("told before deletion").containsExactlyInAnyOrderElementsOf(victims);
        assertThat(victims).allSatisfy(p -> assertThat(p).doesNotExist());
    }

    @Test
    void pinnedBlock_isNeverAVictim_untilUnpinned() throws IOException {
        for (long i = 0; i < 12; i++) {
            put(block(i));
        }
        BlockEntry reading = index.pinForRead(block(0), false); // pinned, not an access: still the least recent

        put(block(12));

        assertThat(residentIndexes(13)).containsExactly(0L, 6L, 7L, 8L, 9L, 10L, 11L, 12L);
        index.unpin(reading);
        for (long i = 13; i < 18; i++) { // the fifth of these evicts again
            put(block(i));
        }
        assertThat(index.isResident(block(0))).as("unpinned, and least recent again").isFalse();
    }

    @Test
    void blockTheCapacityCannotHold_isRefused_andCountedAsBypassed() {
        assertThat(index.reserve(block(0), CAPACITY + 1, false)).isNull();

        assertThat(counters.bypassed.sum()).isEqualTo(1);
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(0, 0));
        assertThat(index.holdsAnyVersionAt(key, 0)).isFalse();
    }

    @Test
    void blockTheCapacityCannotHold_evictsNothingForIt() throws IOException {
        for (long i = 0; i < 12; i++) {
            put(block(i));
        }

        assertThat(index.reserve(block(12), CAPACITY + 1, false)).isNull();

        assertThat(residentIndexes(12)).as("a refused block makes no room").hasSize(12);
        assertThat(counters.evictedCapacity.sum()).isZero();
        assertThat(deleted).isEmpty();
    }

    @Test
    void blockThePolicyRefuses_isNotReserved() throws IOException {
        index = open(new PinPolicy<>()); // admits until the high watermark, then keeps what it has
        for (long i = 0; i < 12; i++) {
            put(block(i));
        }

        assertThat(index.reserve(block(12), BLOCK, false)).isNull();

        assertThat(counters.bypassed.sum()).isEqualTo(1);
        assertThat(residentIndexes(13)).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L);
    }

    @Test
    void newVersion_dropsTheBlocksOfOthers_countedStale() throws IOException {
        BlockEntry old = put(new BlockId(key, "v1", 0));
        BlockEntry current = put(new BlockId(key, "v2", 1));

        index.dropVersionsOtherThan(key, "v2");

        assertThat(index.isResident(old.id)).isFalse();
        assertThat(old.path).doesNotExist();
        assertThat(index.isResident(current.id)).isTrue();
        assertThat(counters.evictedStale.sum()).isEqualTo(1);
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(1, BLOCK));
    }

    @Test
    void pinnedVersion_outlivesItsReplacement_andEviction_untilItsLastPinGoes() throws IOException {
        ObjectMeta v1 = meta(key, "v1");
        BlockEntry kept = put(block(0));
        index.pinVersion(v1);
        index.pinVersion(v1);

        index.dropVersionsOtherThan(key, "v2");
        for (long i = 1; i < 20; i++) { // far past the high watermark: block 0 is the least recent
            put(new BlockId(key, "v2", i));
        }

        assertThat(index.isResident(kept.id)).isTrue();
        assertThat(index.pinnedMeta(key, "v1")).isEqualTo(v1);
        index.unpinVersion(v1);
        assertThat(index.isResident(kept.id)).as("one holder is left").isTrue();
        index.unpinVersion(v1);
        assertThat(index.isResident(kept.id)).isFalse();
        assertThat(kept.path).doesNotExist();
        assertThat(index.pinnedMeta(key, "v1")).isNull();
    }

    @Test
    void publishAfterTheReservationWasDropped_deletesTheOrphanFile() throws IOException {
        BlockEntry reserved = index.reserve(block(0), BLOCK, false);
        index.dropVersionsOtherThan(key, "v2"); // the object changed while its block was being fetched
        Files.createDirectories(reserved.path.getParent());
        Files.write(reserved.path, new byte[BLOCK]);
        BlockEntry ready = new BlockEntry(reserved.id, reserved.path, 100L * BLOCK, BLOCK, 0, 0, false);
        ready.ready = true;

        assertThat(index.publish(reserved, ready)).isFalse();

        assertThat(reserved.path).doesNotExist();
        assertThat(index.isResident(block(0))).isFalse();
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(0, 0));
    }

    @Test
    void corruptBlock_isDroppedAndDeleted_countedCorrupt() throws IOException {
        BlockEntry e = put(block(0));
        BlockEntry pinned = index.pinForRead(block(0), true);

        index.dropCorrupt(pinned);

        assertThat(index.isResident(block(0))).isFalse();
        assertThat(e.path).doesNotExist();
        assertThat(deleted).containsExactly(e.path);
        assertThat(counters.evictedCorrupt.sum()).isEqualTo(1);
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(0, 0));
    }

    @Test
    void pinAll_pinsEveryBlockOrNone() throws IOException {
        put(block(0));
        put(block(1));

        assertThat(index.pinAll(List.of(block(0), block(1), block(2)))).as("block 2 is missing").isNull();
        for (long i = 2; i < 13; i++) {
            put(block(i));
        }
        assertThat(residentIndexes(13)).as("the failed pinAll left 0 and 1 unpinned").containsExactly(5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L);

        List<BlockEntry> pinned = index.pinAll(List.of(block(5), block(6)));
        assertThat(pinned).extracting(e -> e.id).containsExactly(block(5), block(6));
        for (long i = 13; i < 18; i++) { // the last evicts five, the least recent first: 5 and 6 are pinned
            put(block(i));
        }
        assertThat(residentIndexes(18)).containsExactly(5L, 6L, 12L, 13L, 14L, 15L, 16L, 17L);
        index.unpinAll(pinned);
    }

    @Test
    void prefetchedBlockThePolicyRefuses_isHeldOutsideTheCapacity_withinAnEighthOfIt() throws IOException {
        // keeps 8 blocks; holds 2 more for their reads (an eighth of the capacity)
        config = CacheConfig.of(layout.dir(), CAPACITY).withBlockSize(BLOCK).withWatermarks(0.5, 0.5);
        index = open(new PinPolicy<>());
        for (long i = 0; i < 8; i++) {
            put(block(i));
        }
        BlockIndex.Usage full = index.usage();

        put(index, block(8), true);
        put(index, block(9), true);
        assertThat(index.reserve(block(10), BLOCK, true)).as("both held blocks are still unread").isNull();
        index.unpin(index.pinForRead(block(8), true)); // block 8's read came
        put(index, block(10), true);

        assertThat(index.usage()).as("held blocks are outside the capacity").isEqualTo(full);
        assertThat(residentIndexes(11)).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 9L, 10L);
        assertThat(index.reserve(block(11), BLOCK, false)).as("a read's block is not held").isNull();
    }

    @Test
    void recoveredBlocks_pastTheHighWatermark_areEvictedToTheLowOne_andUnderIt_allStay() throws IOException {
        List<BlockEntry> few = List.of(recovered(0), recovered(1), recovered(2), recovered(3));
        index.load(few);
        assertThat(index.usage()).isEqualTo(new BlockIndex.Usage(4, 4L * BLOCK));

        BlockIndex other = open(new LruPolicy<>());
        List<BlockEntry> many = LongStream.range(0, 20).mapToObj(this::recovered).toList();
        other.load(many);
        assertThat(other.usage()).isEqualTo(new BlockIndex.Usage(8, 8L * BLOCK));
        assertThat(counters.evictedCapacity.sum()).isEqualTo(12);
    }

    BlockEntry recovered(long i) {
        BlockId id = block(i);
        return new BlockEntry(id, BlockFile.pathFor(layout.blocks(), id), 100L * BLOCK, BLOCK, 0, 0, true);
    }

    @Test
    void readyEntries_writtenAsTheSnapshot_restoreTheSameIndexOnReopen() throws IOException {
        Files.createDirectories(layout.tmp());
        for (long i = 0; i < 4; i++) {
            put(block(i));
        }
        index.reserve(block(4), BLOCK, false); // being fetched at close: not in the snapshot
        new CacheRecovery(layout).writeSnapshot(index.readyEntries());

        BlockIndex reopened = open(new LruPolicy<>());
        reopened.load(new CacheRecovery(layout).recover(() -> { }));

        assertThat(reopened.usage()).isEqualTo(new BlockIndex.Usage(4, 4L * BLOCK));
        assertThat(reopened.readyEntries()).extracting(e -> e.id)
                .containsExactlyInAnyOrder(block(0), block(1), block(2), block(3));
        assertThat(reopened.readyEntries()).allSatisfy(e -> assertThat(e.recoveredAfterCrash).isFalse());
        assertThat(reopened.isResident(block(4))).isFalse();
    }
}
