package dev.ferry.store.chain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.Etags;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.TrackingStore;
import dev.ferry.store.TrackingStore.Op;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link CheckedWrites} over folder stores that keep what they were sent, keep something else, or keep it
 * under ETags that are not MD5s (as S3 with SSE-KMS): the upstream requests each costs are counted.
 */
class CheckedWritesTest {
    @TempDir
    Path tmp;
    FileObjectStore folder;
    ObjectKey key = ObjectKey.of("data", "model.bin");
    byte[] bytes = "the weights of a model".getBytes(StandardCharsets.UTF_8);

    @BeforeEach
    void setUp() throws IOException {
        folder = new FileObjectStore(tmp.resolve("store"));
        folder.createBucket("data");
    }

    /** Keeps the bytes it is sent with the first one changed, answering the MD5 of what it kept. */
    static final class ChangingStore extends ForwardingObjectStore {
        ChangingStore(ObjectStore delegate) {
            super(delegate);
        }

        @Override
        public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
            byte[] b = body.open().readAllBytes();
            b[0] ^= 1;
            return delegate.put(key, PutBody.ofBytes(b));
        }
    }

    /** Keeps the first half of what it is sent. */
    static final class TruncatingStore extends ForwardingObjectStore {
        TruncatingStore(ObjectStore delegate) {
            super(delegate);
        }

        @Override
        public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
            byte[] b = body.open().readAllBytes();
            return delegate.put(key, PutBody.ofBytes(Arrays.copyOf(b, b.length / 2)));
        }
    }

    /** Keeps the bytes, and names every version by an ETag that is not their MD5, as a bucket under SSE-KMS does. */
    static final class KmsStore extends ForwardingObjectStore {
        KmsStore(ObjectStore delegate) {
            super(delegate);
        }

        static String kms(String etag) {
            return Etags.ofDigest(Etags.md5().digest(("kms" + etag).getBytes(StandardCharsets.UTF_8)));
        }

        private static ObjectMeta kms(ObjectMeta m) {
            return new ObjectMeta(m.key(), m.size(), kms(m.etag()), m.versionId(), m.lastModified(), m.attributes());
        }

        @Override
        public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
            return kms(delegate.put(key, body));
        }

        @Override
        public ObjectMeta head(ObjectKey key) throws IOException {
            return kms(delegate.head(key));
        }

        @Override
        public ObjectContent get(GetRequest request) throws IOException {
            ObjectMeta now = delegate.head(request.key());
            if (request.ifMatch() != null && !request.ifMatch().equals(kms(now.etag()))) {
                throw new StoreException(StoreException.Kind.PRECONDITION_FAILED, 412, "changed", null);
            }
            ObjectContent c = delegate.get(request.withIfMatch(now.etag()));
            return new ObjectContent(kms(c.meta()), c.range(), c.stream());
        }
    }

    @Test
    void aStoreAnsweringTheMd5OfTheBytesSent_costsNoRequestMore() throws Exception {
        TrackingStore tracking = new TrackingStore(folder);
        ObjectMeta m = new CheckedWrites(tracking).put(key, PutBody.ofBytes(bytes));
        assertThat(m.etag()).isEqualTo(Etags.ofDigest(Etags.md5().digest(bytes)));
        assertThat(tracking.calls()).extracting(TrackingStore.Call::op).containsExactly(Op.PUT);
    }

    @Test
    void aStoreThatKeptOtherBytesOfTheSameSize_isFound_byReadingThemBack() throws Exception {
        TrackingStore tracking = new TrackingStore(new ChangingStore(folder));
        assertThatThrownBy(() -> new CheckedWrites(tracking).put(key, PutBody.ofBytes(bytes)))
                .isInstanceOfSatisfying(StoreException.class, e -> {
                    assertThat(e.kind()).isEqualTo(StoreException.Kind.FATAL);
                    assertThat(e.isRetryable()).isFalse();
                    assertThat(e.httpStatus()).isEqualTo(502);
                })
                .hasMessageContaining("holds other bytes at s3://data/model.bin than the 22 written");
        assertThat(tracking.calls()).extracting(TrackingStore.Call::op).containsExactly(Op.PUT, Op.HEAD, Op.GET);
    }

    @Test
    void aStoreThatKeptAnotherSize_isFound_byItsHead() throws Exception {
        TrackingStore tracking = new TrackingStore(new TruncatingStore(folder));
        // the writer knows the MD5 (write-back does): the body is not read again for it
        PutBody body = PutBody.ofBytes(bytes).withEtag(Etags.ofDigest(Etags.md5().digest(bytes)));
        assertThatThrownBy(() -> new CheckedWrites(tracking).put(key, body))
                .hasMessageContaining("holds 11 bytes at s3://data/model.bin, not the 22 bytes written");
        assertThat(tracking.calls()).extracting(TrackingStore.Call::op).containsExactly(Op.PUT, Op.HEAD);
    }

    @Test
    void aBucketWhoseEtagsAreNotMd5s_isReadBackOnce_thenCheckedBySize() throws Exception {
        TrackingStore tracking = new TrackingStore(new KmsStore(folder));
        CheckedWrites checked = new CheckedWrites(tracking);
        ObjectMeta first = checked.put(key, PutBody.ofBytes(bytes));
        assertThat(first.size()).isEqualTo(bytes.length);
        assertThat(tracking.calls()).extracting(TrackingStore.Call::op).containsExactly(Op.PUT, Op.HEAD, Op.GET);
        tracking.reset();
        checked.put(ObjectKey.of("data", "other"), PutBody.ofBytes("more weights".getBytes(StandardCharsets.UTF_8)));
        assertThat(tracking.calls()).extracting(TrackingStore.Call::op).containsExactly(Op.PUT, Op.HEAD);
        assertThat(folder.readBytes(key, null)).isEqualTo(bytes);
    }
}
