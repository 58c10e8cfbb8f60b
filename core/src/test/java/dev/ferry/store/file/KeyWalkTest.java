package dev.ferry.store.file;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The folder store's listings, read a folder at a time ({@link KeyWalk}), against a model that sorts every key: random
 * trees whose names sort around {@code /} ({@code -}, {@code .}, {@code 0}, a letter past ASCII), random prefixes
 * (ending inside a name or at a {@code /}), {@code start-after} anywhere, with and without a delimiter, paged by
 * continuation tokens of 1 to 5 keys.
 */
class KeyWalkTest {
    private static final String[] PARTS = {"a", "b", "a-b", "a.b", "a0", "é", "ab"};

    @Test
    void listingsOfRandomTrees_equalTheSortedModel_fromAnyStartAfter_onEveryPage(@TempDir Path dir) throws IOException {
        FileObjectStore store = new FileObjectStore(dir);
        store.createBucket("bkt");
        Random random = new Random(42);
        TreeSet<String> keys = new TreeSet<>();
        for (int i = 0; i < 120; i++) {
            StringBuilder key = new StringBuilder();
            for (int depth = random.nextInt(4); depth >= 0; depth--) {
                key.append(PARTS[random.nextInt(PARTS.length)]).append(depth > 0 ? "/" : "");
            }
            try {
                store.checkWritable(ObjectKey.of("bkt", key.toString()));
                store.put(ObjectKey.of("bkt", key.toString()), PutBody.ofBytes(new byte[] {1}));
                keys.add(key.toString());
            } catch (StoreException folderOrFile) {
                // a key whose folder is already a file, or a file's name already a folder: not in this store
            }
        }
        assertThat(keys).hasSizeGreaterThan(40);
        List<String> probes = new ArrayList<>(List.of("", "a", "a/", "a-", "a.b/", "é/", "b/a", "zz"));
        for (int i = 0; i < 20; i++) {
            String k = new ArrayList<>(keys).get(random.nextInt(keys.size()));
            probes.add(k);
            probes.add(k.substring(0, random.nextInt(k.length() + 1)));
        }
        for (String prefix : List.of("", "a", "a/", "a-b/", "é")) {
            for (String delimiter : new String[] {null, "/"}) {
                for (String after : probes) {
                    int maxKeys = 1 + random.nextInt(5);
                    assertThat(listAll(store, prefix, delimiter, after, maxKeys))
                            .as("prefix '%s', delimiter %s, start-after '%s', %d a page", prefix, delimiter, after, maxKeys)
                            .containsExactlyElementsOf(model(keys, prefix, delimiter, after));
                }
            }
        }
    }

    /** Every name of a listing, objects and common prefixes, page after page. */
    private static List<String> listAll(FileObjectStore store, String prefix, String delimiter, String after, int maxKeys)
            throws IOException {
        List<String> names = new ArrayList<>();
        ListRequest request = new ListRequest("bkt", prefix, delimiter, null, maxKeys, after);
        while (true) {
            ListPage page = store.list(request);
            TreeSet<String> onPage = new TreeSet<>(page.commonPrefixes());
            page.objects().stream().map(ObjectMeta::key).map(ObjectKey::key).forEach(onPage::add);
            assertThat(onPage.size()).isLessThanOrEqualTo(maxKeys);
            names.addAll(onPage);
            if (!page.isTruncated()) {
                return names;
            }
            request = request.withContinuationToken(page.nextToken());
        }
    }

    /** What S3 names: keys after {@code after} under {@code prefix}, rolled up at the delimiter, none at or before {@code after}. */
    private static List<String> model(TreeSet<String> keys, String prefix, String delimiter, String after) {
        LinkedHashSet<String> names = new LinkedHashSet<>();
        for (String key : after.isEmpty() ? keys : keys.tailSet(after, false)) {
            if (!key.startsWith(prefix)) {
                continue;
            }
            int d = delimiter == null ? -1 : key.indexOf(delimiter, prefix.length());
            String name = d < 0 ? key : key.substring(0, d + 1);
            if (name.compareTo(after) > 0) {
                names.add(name);
            }
        }
        return List.copyOf(names);
    }
}
