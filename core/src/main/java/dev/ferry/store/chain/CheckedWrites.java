package dev.ferry.store.chain;

import dev.ferry.store.Etags;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks that the object store kept what a PUT sent before anything above believes its answer (the local
 * tier caches it as the object's size; write-back calls the write durable). S3 answers a single PUT with the
 * MD5 of the bytes it stored, so an answer equal to the MD5 of the bytes sent costs nothing more. Any other
 * answer is looked into with a HEAD:
 * <ul>
 *   <li>another size, or no object, is a failed write: {@link StoreException.Kind#FATAL}, status 502, one
 *       sentence naming both sizes (an S3-compatible server that keeps a key ending in {@code /} as an empty
 *       folder does this);
 *   <li>the same size under another ETag is read back and compared, once per bucket: a bucket whose ETags
 *       are not MD5s (SSE-KMS) is then remembered, and later writes there are checked by size alone; other
 *       bytes are a failed write as above.
 * </ul>
 * A failed check says nothing of what the store holds now except that it is not what was sent: callers
 * forget what they knew of the key. The MD5 comes from {@link PutBody#etag()} when the writer has it (write-back
 * does), else from reading the body once more. Multipart uploads pass through: their completion is answered
 * with the size the store reports.
 *
 * <p>Sits above the chain, so its HEADs and reads are retried, paced and metered as any other. Over a folder
 * store it is not needed (that store's ETags are the MD5s of the bytes it wrote). Thread-safe.
 */
public final class CheckedWrites extends ForwardingObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(CheckedWrites.class);

    /** Buckets seen to answer ETags that are not the MD5 of the bytes, though they kept the bytes. */
    private final Set<String> etagsNotMd5 = ConcurrentHashMap.newKeySet();

    public CheckedWrites(ObjectStore delegate) {
        super(delegate);
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        String sent = body.etag() != null ? body.etag() : md5(body);
        ObjectMeta answer = delegate.put(key, body);
        if (answer.etag().equals(sent) && answer.size() == body.length()) {
            return answer;
        }
        ObjectMeta held;
        try {
            held = delegate.head(key);
        } catch (StoreException e) {
            if (e.kind() != StoreException.Kind.NOT_FOUND) {
                throw e;
            }
            throw mismatch(key, "does not hold " + key + " after answering its PUT of " + body.length() + " bytes");
        }
        if (held.size() != body.length()) {
            throw mismatch(key, "holds " + held.size() + " bytes at " + key + ", not the " + body.length() + " bytes written");
        }
        if (!held.etag().equals(sent) && !etagsNotMd5.contains(key.bucket())) {
            if (!sameBytes(key, held, body)) {
                throw mismatch(key, "holds other bytes at " + key + " than the " + body.length() + " written (read back and compared)");
            }
            etagsNotMd5.add(key.bucket());
            LOG.info("bucket {} gives ETags that are not content MD5s (SSE-KMS?): {} read back whole and found right; "
                    + "later writes there are checked by size", key.bucket(), key);
        }
        return held;
    }

    private static StoreException mismatch(ObjectKey key, String what) {
        return new StoreException(StoreException.Kind.FATAL, 502, "the object store " + what
                + ": it stored something else (or another writer replaced it since), so the write failed", null);
    }

    private boolean sameBytes(ObjectKey key, ObjectMeta held, PutBody body) throws IOException {
        try (ObjectContent stored = delegate.get(new GetRequest(key, null, held.etag()));
                InputStream sent = body.open()) {
            InputStream got = stored.stream();
            byte[] a = new byte[1 << 16];
            byte[] b = new byte[1 << 16];
            while (true) {
                int n = got.readNBytes(a, 0, a.length);
                int m = sent.readNBytes(b, 0, n == 0 ? b.length : n);
                if (n != m || !Arrays.equals(a, 0, n, b, 0, m)) {
                    return false;
                }
                if (n == 0) {
                    return true;
                }
            }
        }
    }

    private static String md5(PutBody body) throws IOException {
        MessageDigest md5 = Etags.md5();
        try (InputStream in = body.open()) {
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md5.update(buf, 0, n);
            }
        }
        return Etags.ofDigest(md5.digest());
    }
}
