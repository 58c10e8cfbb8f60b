package dev.ferry.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.CompletedPart;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ListRequest;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.PendingUploads;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The folder store gives objects the ETags S3 gives them, keeps their attributes, and keeps multipart uploads as S3 does. */
class FileObjectStoreEtagTest {
    @TempDir
    Path root;
    FileObjectStore store;

    @BeforeEach
    void open() throws IOException {
        store = new FileObjectStore(root);
        store.createBucket("bkt");
    }

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    static String md5(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(b));
    }

    @Test
    void put_etagIsTheContentMd5_andStableAcrossRewritesOfTheSameBytes() throws Exception {
        ObjectKey key = ObjectKey.of("bkt", "x/y.bin");
        byte[] bytes = random(100_000, 1);
        assertThat(store.put(key, PutBody.ofBytes(bytes)).etag()).isEqualTo(md5(bytes));
        assertThat(store.head(key).etag()).isEqualTo(md5(bytes));
        assertThat(store.list(ListRequest.of("bkt", "x/")).objects()).singleElement().satisfies(m -> assertThat(m.etag()).isEqualTo(md5(bytes)));
        assertThat(new FileObjectStore(root).head(key).etag()).as("after a restart").isEqualTo(md5(bytes));
        assertThat(store.put(key, PutBody.ofBytes(bytes)).etag()).as("a retried upload").isEqualTo(md5(bytes));
    }

    @Test
    void aFileRewrittenByAnotherProgram_getsAnEtagOfItsOwn_andLosesTheAttributes() throws Exception {
        ObjectKey key = ObjectKey.of("bkt", "k");
        byte[] bytes = random(1000, 2);
        store.put(key, PutBody.ofBytes(bytes).withAttributes(new ObjectAttributes(Map.of("content-type", "text/csv"))));
        Files.write(root.resolve("bkt/k"), random(1000, 3)); // same size, other bytes, not through the store
        ObjectMeta now = store.head(key);
        assertThat(now.etag()).isNotEqualTo(md5(bytes));
        assertThat(now.attributes().isEmpty()).isTrue();
    }

    @Test
    void attributes_areKeptWithTheObject_andDroppedWithIt() throws Exception {
        ObjectKey key = ObjectKey.of("bkt", "doc.json");
        ObjectAttributes attrs = new ObjectAttributes(Map.of("content-type", "application/json", "cache-control", "max-age=60",
                "x-amz-meta-epoch", "7"));
        assertThat(store.put(key, PutBody.ofBytes(new byte[] {'{', '}'}).withAttributes(attrs)).attributes()).isEqualTo(attrs);
        assertThat(store.head(key).attributes()).isEqualTo(attrs);
        try (ObjectContent c = store.get(new GetRequest(key, null, null))) {
            assertThat(c.meta().attributes()).isEqualTo(attrs);
        }
        store.delete(key);
        store.put(key, PutBody.ofBytes(new byte[] {'1'}));
        assertThat(store.head(key).attributes().isEmpty()).isTrue();
    }

    @Test
    void multipart_etagIsTheMd5OfThePartMd5s_andAttributesComeFromTheStart() throws Exception {
        ObjectKey key = ObjectKey.of("bkt", "big");
        byte[] p1 = random(5 << 20, 4);
        byte[] p2 = random(1000, 5);
        MultipartUpload u = store.startMultipart(key, new ObjectAttributes(Map.of("content-type", "video/mp4")));
        CompletedPart c1 = store.uploadPart(u, 1, PutBody.ofBytes(p1));
        CompletedPart c2 = store.uploadPart(u, 2, PutBody.ofBytes(p2));
        assertThat(c1.etag()).isEqualTo(md5(p1));
        MessageDigest both = MessageDigest.getInstance("MD5");
        both.update(HexFormat.of().parseHex(md5(p1)));
        both.update(HexFormat.of().parseHex(md5(p2)));
        String expected = HexFormat.of().formatHex(both.digest()) + "-2";
        ObjectMeta done = store.completeMultipart(u, List.of(c1, c2));
        assertThat(done.etag()).isEqualTo(expected);
        assertThat(store.head(key).etag()).isEqualTo(expected);
        assertThat(store.head(key).attributes().get("content-type")).isEqualTo("video/mp4");
        assertThat(store.completeMultipart(u, List.of(c1, c2)).etag()).as("a retried Complete").isEqualTo(expected);
        store.put(key, PutBody.ofBytes(p2));
        assertThatThrownBy(() -> store.completeMultipart(u, List.of(c1, c2))).as("once its object is replaced")
                .isInstanceOf(StoreException.class).hasMessageContaining("replaced or deleted");
    }

    @Test
    void multipart_partsUnder5MiBButTheLast_areEntityTooSmall() throws Exception {
        ObjectKey key = ObjectKey.of("bkt", "small-parts");
        MultipartUpload u = store.startMultipart(key);
        CompletedPart c1 = store.uploadPart(u, 1, PutBody.ofBytes(random(1000, 6)));
        CompletedPart c2 = store.uploadPart(u, 2, PutBody.ofBytes(random(1000, 7)));
        assertThatThrownBy(() -> store.completeMultipart(u, List.of(c1, c2))).isInstanceOfSatisfying(StoreException.class,
                e -> assertThat(e.errorCode()).isEqualTo("EntityTooSmall"));
        assertThat(store.completeMultipart(u, List.of(c1)).size()).as("one small part is the last").isEqualTo(1000);
    }

    @Test
    void multipart_aPartIsFoundByTheEtagNamed_notByItsNumberAlone() throws Exception {
        ObjectKey key = ObjectKey.of("bkt", "reuploaded");
        MultipartUpload u = store.startMultipart(key);
        CompletedPart first = store.uploadPart(u, 1, PutBody.ofBytes(random(1000, 8)));
        store.uploadPart(u, 1, PutBody.ofBytes(random(1000, 9)));
        assertThatThrownBy(() -> store.completeMultipart(u, List.of(first))).isInstanceOfSatisfying(StoreException.class,
                e -> assertThat(e.errorCode()).isEqualTo("InvalidPart"));
    }

    @Test
    void pendingUploads_areListedByPrefix_andExpire() throws Exception {
        MultipartUpload a = store.startMultipart(ObjectKey.of("bkt", "logs/a"));
        MultipartUpload b = store.startMultipart(ObjectKey.of("bkt", "other"));
        store.uploadPart(a, 1, PutBody.ofBytes(random(1000, 10)));
        assertThat(store.listUploads("bkt", "logs/")).extracting(PendingUploads.Upload::uploadId).containsExactly(a.uploadId());
        assertThat(store.listUploads("bkt", "")).hasSize(2);
        assertThat(store.expireUploads(Instant.now().minusSeconds(3600))).isZero();
        assertThat(store.expireUploads(Instant.now().plusSeconds(1))).isEqualTo(2);
        assertThat(store.listUploads("bkt", "")).isEmpty();
        assertThatThrownBy(() -> store.uploadPart(b, 1, PutBody.ofBytes(random(10, 11)))).isInstanceOf(StoreException.class);
        try (var left = Files.list(root.resolve(".ferry-uploads"))) {
            assertThat(left).as("staged parts deleted").isEmpty();
        }
    }

    @Test
    void checkWritable_refusesWhatAWriteWouldFail() throws Exception {
        store.put(ObjectKey.of("bkt", "file"), PutBody.ofBytes(new byte[1]));
        store.put(ObjectKey.of("bkt", "dir/x"), PutBody.ofBytes(new byte[1]));
        assertThatThrownBy(() -> store.checkWritable(ObjectKey.of("nobucket", "k"))).isInstanceOf(ObjectNotFoundException.class);
        assertThatThrownBy(() -> store.checkWritable(ObjectKey.of("bkt", "file/child"))).hasMessageContaining("already an object");
        assertThatThrownBy(() -> store.checkWritable(ObjectKey.of("bkt", "dir"))).hasMessageContaining("as a folder");
        assertThatThrownBy(() -> store.checkWritable(ObjectKey.of("bkt", "a//b"))).hasMessageContaining("empty path segment");
        store.checkWritable(ObjectKey.of("bkt", "fine/new"));
    }
}
