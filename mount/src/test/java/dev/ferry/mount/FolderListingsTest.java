package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.ManualClock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A large tree a reader lists is listed ahead as ranges at once, over a real folder store: every folder is kept with
 * what its own delimited LIST names, each range starts where {@link FolderListings#rangeStarts} says, and a run
 * stops at the next range's first key (at most a page more each than the tree's pages).
 */
class FolderListingsTest {
    @Test
    void theRangesOfATree_followFromWhereItsFirstPageEnded() {
        // 3,000 keys in 100 folders: the first page ends in the 34th, 2 pages are left: one listing, no range
        assertThat(FolderListings.rangeStarts(100, 33)).isEmpty();
        // 20,000 keys in 100 folders: the first page ends in the 5th, 19 pages left: 8 runs, the first listing's and 7 ranges
        assertThat(FolderListings.rangeStarts(100, 4)).containsExactly(16, 28, 40, 52, 64, 76, 88);
        // 5,000 keys in 25 folders: 4 pages left, two runs of 2
        assertThat(FolderListings.rangeStarts(25, 4)).containsExactly(15);
        // one large folder beside another: nothing to split
        assertThat(FolderListings.rangeStarts(2, 0)).isEmpty();
        // the first page ended in a folder not claimed (kept already): no measure, no split
        assertThat(FolderListings.rangeStarts(100, -1)).isEmpty();
        // 1,000 folders of more than a page each: 8 runs of 125 folders, capped there
        List<Integer> big = FolderListings.rangeStarts(1000, 0);
        assertThat(big).hasSize(FolderListings.AHEAD_CONCURRENCY - 1).isSorted().allMatch(i -> i > 0 && i < 1000);
    }

    @Test
    void aTreeOfFivePages_isListedAsTwoRangesAtOnce_andEveryFolderIsKeptAsItsOwnListNamesIt(@TempDir Path dir) throws Exception {
        FileObjectStore store = new FileObjectStore(dir);
        store.createBucket("bkt");
        for (int d = 0; d < 25; d++) { // files in the bucket's folder are its objects (written there, as a data set would be)
            Path folder = Files.createDirectories(dir.resolve(String.format("bkt/t/d%02d", d)));
            for (int f = 0; f < 200; f++) {
                Files.writeString(folder.resolve(String.format("f%03d.bin", f)), folder + "/" + f);
            }
        }
        List<ListRequest> lists = new CopyOnWriteArrayList<>();
        ForwardingObjectStore recorded = new ForwardingObjectStore(store) {
            @Override
            public ListPage list(ListRequest request) throws IOException {
                lists.add(request);
                return super.list(request);
            }
        };
        try (ExecutorService ahead = Executors.newVirtualThreadPerTaskExecutor()) {
            FolderListings listings = new FolderListings(recorded, new ManualClock(), Duration.ofSeconds(60), ahead, new LocalNames(null));
            // a reader lists t/: its 25 folders, kept; the tree under them is listed ahead
            FolderListings.Gathering top = listings.gather("bkt", "t/");
            List<FolderEntry> entries = new ArrayList<>();
            assertThat(listings.listPage("bkt", "t/", null, entries)).isNull();
            top.add(entries);
            top.done();
            for (int d = 0; d < 25; d++) {
                String sub = String.format("t/d%02d/", d);
                List<FolderEntry> kept = listings.keptEntries("bkt", sub);
                assertThat(kept).as(sub).hasSize(200);
                List<FolderEntry> own = new ArrayList<>();
                assertThat(listings.listPage("bkt", sub, null, own)).isNull();
                assertThat(new HashSet<>(kept)).as(sub + " as its own LIST names it").isEqualTo(new HashSet<>(own));
            }
        }
        List<ListRequest> tree = lists.stream().filter(r -> r.delimiter() == null).toList();
        // the first page ends in d04/, 4 pages are left: the first listing goes on to d15/, a range lists d15/ on
        assertThat(tree.stream().filter(r -> r.startAfter() != null).map(ListRequest::startAfter)).containsExactly("t/d15");
        // 5 pages of keys: 4 by the first listing (its 4th page starts with d15/'s keys, where it stops), 2 by the range
        assertThat(tree).as("LISTs of the tree").hasSize(6);
        assertThat(lists).as("no folder listed on its own ahead: the ranges reached them all")
                .filteredOn(r -> r.delimiter() != null && !r.prefix().equals("t/")).hasSize(25); // the test's own, above
    }
}
