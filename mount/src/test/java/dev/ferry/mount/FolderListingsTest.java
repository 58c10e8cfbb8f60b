package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Await;
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
 * A large tree a reader lists is listed ahead a page and then a folder at a time, over a real folder store: every
 * folder is kept with what its own delimited LIST names, and the tree's listing stops where
 * {@link FolderListings#folderAtATime} says.
 */
class FolderListingsTest {
    @Test
    void theRestOfATree_isListedAFolderAtATime_whenItsFirstPageShowsManyPagesOfFewFolders() {
        // 3,000 keys in 100 folders: the first page ends in the 34th, 2 pages are left: one page after another
        assertThat(FolderListings.folderAtATime(100, 33)).isFalse();
        // 20,000 keys in 100 folders: the first page ends in the 5th, 19 pages are left, 95 folders: 12 rounds of 8
        assertThat(FolderListings.folderAtATime(100, 4)).isTrue();
        // 5,000 keys in 25 folders: 4 pages left
        assertThat(FolderListings.folderAtATime(25, 4)).isTrue();
        // 4,000 keys in 20 folders: 3 pages left, as many rounds as pages
        assertThat(FolderListings.folderAtATime(20, 4)).isFalse();
        // 12,000 keys in 120 folders of 100: a page holds 10 folders, more than LISTs at once: pages
        assertThat(FolderListings.folderAtATime(120, 9)).isFalse();
        // 1,000 folders of more than a page each
        assertThat(FolderListings.folderAtATime(1000, 0)).isTrue();
        // one large folder beside another: nothing to gain
        assertThat(FolderListings.folderAtATime(2, 0)).isFalse();
        // the first page ended in a folder not claimed (kept already): no measure
        assertThat(FolderListings.folderAtATime(100, -1)).isFalse();
    }

    /** {@code store}, with every LIST request it is sent added to {@code lists}. */
    static ForwardingObjectStore recordingLists(FileObjectStore store, List<ListRequest> lists) {
        return new ForwardingObjectStore(store) {
            @Override
            public ListPage list(ListRequest request) throws IOException {
                lists.add(request);
                return super.list(request);
            }
        };
    }

    @Test
    void aFolderTooLargeForALookupToWaitFor_answersLookupsFromThePagesListedSoFar_andIsKeptWholeInTheEnd(@TempDir Path dir) throws Exception {
        FileObjectStore store = new FileObjectStore(dir);
        store.createBucket("bkt");
        Path folder = Files.createDirectories(dir.resolve("bkt/flat"));
        int files = 3_500; // 4 pages: a lookup waits for 3 (FolderListings.AHEAD_ENTRIES and a page more)
        for (int f = 0; f < files; f++) {
            Files.writeString(folder.resolve(String.format("f%04d.bin", f)), "x".repeat(f % 7));
        }
        List<ListRequest> lists = new CopyOnWriteArrayList<>();
        ForwardingObjectStore recorded = recordingLists(store, lists);
        ManualClock clock = new ManualClock();
        try (ExecutorService ahead = Executors.newVirtualThreadPerTaskExecutor()) {
            FolderListings listings = new FolderListings(recorded, clock, Duration.ofSeconds(60), ahead, new LocalNames(null));
            FolderEntry first = listings.listed(MountPath.parse("/bkt/flat/f0006.bin"));
            assertThat(first).as("named by the pages the lookup waited for").isNotNull();
            assertThat(first.meta().size()).isEqualTo(6);
            Await.until("the folder listed whole", Duration.ofSeconds(30), () -> listings.beingListed() == 0);
            assertThat(lists).as("the folder's 4 pages, once").hasSize(4);
            FolderEntry last = listings.listed(MountPath.parse("/bkt/flat/f3499.bin"));
            assertThat(last.meta().size()).as("the last page's name, from the listing kept whole").isEqualTo(3499 % 7);
            assertThat(listings.listed(MountPath.parse("/bkt/flat/new.bin"))).as("a name it lacks: asked of the store").isNull();
            assertThat(lists).as("no LIST for lookups in a kept listing").hasSize(4);

            clock.advanceMillis(61_000); // expired: listed again (whole: at most 10 pages) at the next lookup
            assertThat(listings.listed(MountPath.parse("/bkt/flat/f0100.bin"))).isNotNull();
            Await.until("the folder listed again", Duration.ofSeconds(30), () -> listings.beingListed() == 0);
            assertThat(lists).hasSize(8);
        }
    }

    @Test
    void aTreeOfFivePages_isListedAPageThenAFolderAtATime_andEveryFolderIsKeptAsItsOwnListNamesIt(@TempDir Path dir) throws Exception {
        FileObjectStore store = new FileObjectStore(dir);
        store.createBucket("bkt");
        for (int d = 0; d < 25; d++) { // files in the bucket's folder are its objects (written there, as a data set would be)
            Path folder = Files.createDirectories(dir.resolve(String.format("bkt/t/d%02d", d)));
            for (int f = 0; f < 200; f++) {
                Files.writeString(folder.resolve(String.format("f%03d.bin", f)), folder + "/" + f);
            }
        }
        List<ListRequest> lists = new CopyOnWriteArrayList<>();
        ForwardingObjectStore recorded = recordingLists(store, lists);
        try (ExecutorService ahead = Executors.newVirtualThreadPerTaskExecutor()) {
            FolderListings listings = new FolderListings(recorded, new ManualClock(), Duration.ofSeconds(60), ahead, new LocalNames(null));
            // a reader lists t/: its 25 folders, kept; the tree under them is listed ahead
            FolderListings.Gathering top = listings.gather("bkt", "t/");
            List<FolderEntry> entries = new ArrayList<>();
            assertThat(listings.pages().list("bkt", "t/", null, entries)).isNull();
            top.add(entries);
            top.done();
            for (int d = 0; d < 25; d++) {
                String sub = String.format("t/d%02d/", d);
                List<FolderEntry> kept = listings.keptEntries("bkt", sub);
                assertThat(kept).as(sub).hasSize(200);
                List<FolderEntry> own = new ArrayList<>();
                assertThat(listings.pages().list("bkt", sub, null, own)).isNull();
                assertThat(new HashSet<>(kept)).as(sub + " as its own LIST names it").isEqualTo(new HashSet<>(own));
            }
        }
        List<ListRequest> tree = lists.stream().filter(r -> r.delimiter() == null).toList();
        assertThat(tree).as("the tree's first page alone: its 5 folders of 200 leave 4 pages").hasSize(1);
        // the folders it did not complete, d04/ (its last) and on, each listed once ahead; each of the 25 once by the test
        assertThat(lists.stream().filter(r -> r.delimiter() != null && !r.prefix().equals("t/")).map(ListRequest::prefix))
                .hasSize(21 + 25).containsOnlyOnce("t/d00/", "t/d03/").filteredOn("t/d04/"::equals).hasSize(2);
    }
}
