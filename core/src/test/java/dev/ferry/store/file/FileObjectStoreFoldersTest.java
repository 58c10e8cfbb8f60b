package dev.ferry.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.ByteRange;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The folder store keeps keys in folders it makes for a write and removes when a delete empties them: a write and a
 * delete in one folder at once (a rename through the mount: the new name's upload, the old name's delete) must both
 * land, and only a real conflict (a parent that is an object) refuses a key.
 */
class FileObjectStoreFoldersTest {
    @TempDir
    Path root;
    FileObjectStore store;

    @BeforeEach
    void open() throws IOException {
        store = new FileObjectStore(root);
        store.createBucket("bkt");
    }

    @Test
    void aPutBesideADeleteThatEmptiesTheFolder_lands() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int i = 0; i < 300; i++) {
                // every other round the new name is two folders deeper: the delete removes the folder that the
                // put's folders are made in, between createDirectories' looks
                ObjectKey old = ObjectKey.of("bkt", "mv" + i + "/a.txt");
                ObjectKey renamed = ObjectKey.of("bkt", "mv" + i + (i % 2 == 0 ? "/b.txt" : "/x/y/b.txt"));
                byte[] body = bytes("moved " + i);
                store.put(old, PutBody.ofBytes(body));
                CyclicBarrier together = new CyclicBarrier(2);
                Future<?> put = pool.submit(() -> {
                    together.await();
                    return store.put(renamed, PutBody.ofBytes(body));
                });
                Future<?> delete = pool.submit(() -> {
                    together.await();
                    store.delete(old);
                    return null;
                });
                put.get(); // throws what the put threw: a folder emptied and removed under it must not fail it
                delete.get();
                assertThat(store.get(GetRequest.whole(renamed)).readAllBytes()).as("round %d", i).isEqualTo(body);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aFoldersName_isNoObject_toAGetAsToAHead() throws Exception {
        store.put(ObjectKey.of("bkt", "d/a.txt"), PutBody.ofBytes(bytes("in a folder")));
        ObjectKey folder = ObjectKey.of("bkt", "d");
        assertThatThrownBy(() -> store.head(folder)).isInstanceOf(ObjectNotFoundException.class);
        assertThatThrownBy(() -> store.get(GetRequest.whole(folder))).isInstanceOf(ObjectNotFoundException.class);
        assertThatThrownBy(() -> store.get(GetRequest.range(folder, ByteRange.of(0, 1 << 20))))
                .as("a mount's lookup of a folder's name").isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void aKeyUnderAnObject_isRefused() throws Exception {
        store.put(ObjectKey.of("bkt", "x"), PutBody.ofBytes(bytes("an object")));
        assertThatThrownBy(() -> store.put(ObjectKey.of("bkt", "x/y"), PutBody.ofBytes(bytes("under it"))))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("a parent folder of it is already an object: s3://bkt/x/y");
        assertThatThrownBy(() -> store.put(ObjectKey.of("bkt", "x/y/z"), PutBody.ofBytes(bytes("deeper under it"))))
                .as("the object two folders up")
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("a parent folder of it is already an object: s3://bkt/x/y/z");
    }

    @Test
    void aKeyUnderAnObject_isNotFound_andDeletingItIsFine_asAKeyNeverWritten() throws Exception {
        store.put(ObjectKey.of("bkt", "x"), PutBody.ofBytes(bytes("an object")));
        for (String k : new String[] {"x/y", "x/y/z"}) {
            ObjectKey key = ObjectKey.of("bkt", k);
            assertThatThrownBy(() -> store.head(key)).as("HEAD %s", k).isInstanceOf(ObjectNotFoundException.class);
            assertThatThrownBy(() -> store.get(GetRequest.whole(key))).as("GET %s", k).isInstanceOf(ObjectNotFoundException.class);
            store.delete(key);
            assertThat(store.list(new ListRequest("bkt", k + "/", null, null, 1000)).objects()).as("LIST %s/", k).isEmpty();
        }
        assertThat(store.get(GetRequest.whole(ObjectKey.of("bkt", "x"))).readAllBytes()).isEqualTo(bytes("an object"));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
