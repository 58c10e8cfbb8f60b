package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tree listed in pages with no delimiter hands over each folder under its top with what a LIST of that folder with
 * {@code /} as delimiter names, over a real folder store: files at several depths, names that sort around {@code /},
 * a folder larger than the cap, a tree longer than the pages allowed, and a listing stopped after its first page.
 */
class TreeListingTest {
    private static final int CAP = 50;

    private FileObjectStore store;

    @BeforeEach
    void fill(@TempDir Path dir) throws IOException {
        store = new FileObjectStore(dir);
        store.createBucket("bkt");
        List<String> keys = new ArrayList<>(List.of("t/a.txt", "t/a/1.bin", "t/a/2.bin", "t/a/b/c/deep.bin", "t/a/b/shallow.bin",
                "t/a0/x.bin", "t/a-b/y.bin", "t/top.bin", "u/elsewhere.bin", "t/z/only/one.bin"));
        for (int i = 0; i < 60; i++) {
            keys.add(String.format("t/big/f%03d.bin", i)); // more than the cap
        }
        for (int c = 0; c < 30; c++) {
            for (int f = 0; f < 40; f++) {
                keys.add(String.format("t/classes/c%02d/img%02d.jpg", c, f)); // 1,200 keys: two pages
            }
        }
        for (String k : keys) {
            store.put(ObjectKey.of("bkt", k), PutBody.ofBytes(k.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** What a LIST of {@code prefix} with "/" as delimiter names, as the mount keeps it. */
    private List<FolderEntry> delimited(String prefix) throws IOException {
        List<FolderEntry> entries = new ArrayList<>();
        String token = null;
        do {
            ListPage p = store.list(new ListRequest("bkt", prefix, "/", token, ListRequest.DEFAULT_MAX_KEYS));
            for (String cp : p.commonPrefixes()) {
                entries.add(new FolderEntry(cp.substring(prefix.length(), cp.length() - 1), null));
            }
            for (ObjectMeta m : p.objects()) {
                entries.add(new FolderEntry(m.key().key().substring(prefix.length()), m));
            }
            token = p.nextToken();
        } while (token != null);
        return entries;
    }

    /** Every folder under {@code prefix}, at any depth, by delimited LISTs. */
    private void folders(String prefix, List<String> into) throws IOException {
        for (FolderEntry e : delimited(prefix)) {
            if (e.meta() == null) {
                into.add(prefix + e.name() + "/");
                folders(prefix + e.name() + "/", into);
            }
        }
    }

    private Map<String, List<FolderEntry>> run(int pages, boolean[] whole) throws IOException {
        Map<String, List<FolderEntry>> handed = new LinkedHashMap<>();
        whole[0] = new TreeListing(store, "bkt", "t/", CAP, (prefix, entries) -> {
            assertThat(handed.put(prefix, entries)).as("each folder handed over once: " + prefix).isNull();
            handed.putIfAbsent(prefix, null);
        }, null).run(pages);
        return handed;
    }

    @Test
    void everyFolderUnderTheTop_isHandedOver_withWhatItsDelimitedListNames() throws IOException {
        boolean[] whole = new boolean[1];
        Map<String, List<FolderEntry>> handed = run(10, whole);
        assertThat(whole[0]).isTrue();
        List<String> all = new ArrayList<>();
        folders("t/", all);
        assertThat(handed.keySet()).containsExactlyInAnyOrderElementsOf(all);
        assertThat(all).contains("t/a/", "t/a/b/", "t/a/b/c/", "t/a0/", "t/a-b/", "t/z/only/", "t/classes/c29/").doesNotContain("t/", "u/");
        for (String folder : all) {
            List<FolderEntry> expected = delimited(folder);
            if (expected.size() > CAP) {
                assertThat(handed.get(folder)).as(folder + ": over the cap").isNull();
            } else {
                assertThat(new HashSet<>(handed.get(folder))).as(folder).isEqualTo(new HashSet<>(expected));
                assertThat(handed.get(folder)).as(folder + ": each entry once").hasSameSizeAs(expected);
            }
        }
        assertThat(handed.get("t/big/")).isNull();
        assertThat(handed.get("t/classes/")).hasSize(30);
    }

    @Test
    void aPageTheStoreFailsToList_failsTheRun_withTheStoresError_afterTheFoldersBeforeIt() throws IOException {
        IOException outage = new IOException("the store is down");
        ObjectStore failsPastThePage = new ForwardingObjectStore(store) {
            @Override
            public ListPage list(ListRequest request) throws IOException {
                if (request.continuationToken() != null) {
                    throw outage; // the second page
                }
                return super.list(request);
            }
        };
        Map<String, List<FolderEntry>> handed = new LinkedHashMap<>();
        TreeListing listing = new TreeListing(failsPastThePage, "bkt", "t/", CAP, handed::put, null);
        assertThatThrownBy(() -> listing.run(10)).isSameAs(outage);
        assertThat(handed).as("the folders the first page completed").containsKeys("t/a/", "t/classes/c00/")
                .doesNotContainKeys("t/z/", "t/classes/");
    }

    @Test
    void aTreeLongerThanThePagesAllowed_handsOverOnlyTheFoldersItCompleted() throws IOException {
        boolean[] whole = new boolean[1];
        Map<String, List<FolderEntry>> handed = run(1, whole);
        assertThat(whole[0]).as("1,275 keys are more than one page").isFalse();
        List<String> all = new ArrayList<>();
        folders("t/", all);
        Set<String> notHanded = new HashSet<>(all);
        notHanded.removeAll(handed.keySet());
        assertThat(notHanded).as("the folders past the first page").contains("t/z/", "t/z/only/", "t/classes/");
        assertThat(handed).as("those the first page completed").containsKeys("t/a/", "t/a/b/c/", "t/big/", "t/classes/c00/");
        for (Map.Entry<String, List<FolderEntry>> e : handed.entrySet()) {
            if (e.getValue() != null) {
                assertThat(new HashSet<>(e.getValue())).as(e.getKey()).isEqualTo(new HashSet<>(delimited(e.getKey())));
            }
        }
    }

    @Test
    void theSplitIsAskedOnceAfterTheFirstPage_withTheTopsFolderItEndedIn_andStoppingThereHandsOverNoFolderStillOpen()
            throws IOException {
        for (boolean stop : new boolean[] {false, true}) {
            List<String> asked = new ArrayList<>();
            Map<String, List<FolderEntry>> handed = new LinkedHashMap<>();
            boolean whole = new TreeListing(store, "bkt", "t/", CAP, handed::put, reached -> {
                asked.add(reached);
                return stop;
            }).run(10);
            assertThat(asked).as("the first page's 1,000 keys end among the classes' 1,200").containsExactly("t/classes/");
            assertThat(whole).isEqualTo(!stop);
            if (stop) {
                assertThat(handed).as("completed on the first page").containsKeys("t/a/", "t/big/", "t/classes/c00/")
                        .as("still open, or not reached").doesNotContainKeys("t/classes/", "t/z/", "t/z/only/");
                for (Map.Entry<String, List<FolderEntry>> e : handed.entrySet()) {
                    if (e.getValue() != null) {
                        assertThat(new HashSet<>(e.getValue())).as(e.getKey()).isEqualTo(new HashSet<>(delimited(e.getKey())));
                    }
                }
            } else {
                assertThat(handed).containsKeys("t/classes/", "t/classes/c29/", "t/z/only/");
            }
        }
    }
}
