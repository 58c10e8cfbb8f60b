package dev.ferry.store.shared;

import dev.ferry.store.ByteRange;
import dev.ferry.store.CompletedPart;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.MultipartUpload;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectNotFoundException;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shared file system (NFS, Lustre, a parallel file system mounted on every node) as a tier between the
 * nodes and the object store. Objects are kept there through a {@link FileObjectStore} on the mount, each
 * under a name that holds the version it is a copy of: {@code <bucket>/<key>@<ETag>}. So, as in the local
 * tier, a copy is only ever served for the version a read asks for, and a new version is fetched anew.
 *
 * <p>A read whose version is not there yet fetches the whole object from upstream (pinned to the ETag) and
 * publishes it with the file store's write-to-temporary-then-rename, so nodes filling the same object at
 * once cannot leave a torn copy; every node then reads it from the mount. A copy whose size does not match
 * its version is removed and fetched again. Nothing is evicted here: the shared file system's own quota and
 * clean-up policy bound it. Writes, listings and multipart uploads go to upstream. Thread-safe.
 */
public final class SharedTierStore extends ForwardingObjectStore {
    private static final Logger LOG = LoggerFactory.getLogger(SharedTierStore.class);
    static final String BUCKET = "ferry-shared";

    private final FileObjectStore tier;
    private final Duration metadataTtl;
    private final Clock clock;
    private final ConcurrentHashMap<ObjectKey, Meta> metadata = new ConcurrentHashMap<>();
    private final LongAdder hits = new LongAdder();
    private final LongAdder fills = new LongAdder();
    private final LongAdder bytesFromTier = new LongAdder();
    private final LongAdder bytesFilled = new LongAdder();
    private final LongAdder damaged = new LongAdder();

    private record Meta(ObjectMeta meta, long at) {
    }

    /** What the shared tier has done: reads served from it, objects copied into it, bytes each way, bad copies dropped. */
    public record SharedStats(long hits, long fills, long bytesFromTier, long bytesFilled, long damaged) {
    }

    public SharedTierStore(ObjectStore upstream, Path mount, Duration metadataTtl) throws IOException {
        this(upstream, mount, metadataTtl, Clock.system());
    }

    /** The same, aging the metadata it trusts on {@code clock}. */
    public SharedTierStore(ObjectStore upstream, Path mount, Duration metadataTtl, Clock clock) throws IOException {
        super(upstream);
        this.tier = new FileObjectStore(mount);
        this.tier.createBucket(BUCKET);
        this.metadataTtl = metadataTtl;
        this.clock = Objects.requireNonNull(clock, "clock is null");
    }

    public SharedStats stats() {
        return new SharedStats(hits.sum(), fills.sum(), bytesFromTier.sum(), bytesFilled.sum(), damaged.sum());
    }

    /** The name of the copy of one version of an object on the shared tier. */
    static ObjectKey copyOf(ObjectMeta meta) {
        return ObjectKey.of(BUCKET, meta.key().bucket() + "/" + meta.key().key() + "@" + meta.etag().replace('/', '_'));
    }

    private ObjectMeta resolve(ObjectKey key, String ifMatch) throws IOException {
        Meta m = metadata.get(key);
        long now = clock.nanoTime();
        if (m != null && (ifMatch != null ? ifMatch.equals(m.meta().etag()) : now - m.at() < metadataTtl.toNanos())) {
            return m.meta();
        }
        ObjectMeta fresh = delegate.head(key);
        metadata.put(key, new Meta(fresh, now));
        if (ifMatch != null && !ifMatch.equals(fresh.etag())) {
            throw new StoreException(StoreException.Kind.PRECONDITION_FAILED, 412,
                    "object changed: " + key + " has ETag " + fresh.etag() + ", not " + ifMatch, null);
        }
        return fresh;
    }

    @Override
    public ObjectMeta head(ObjectKey key) throws IOException {
        return resolve(key, null);
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        ObjectMeta meta = resolve(request.key(), request.ifMatch());
        ObjectKey copy = copyOf(meta);
        ByteRange range = request.range() == null ? (meta.size() == 0 ? null : ByteRange.of(0, meta.size())) : request.range().clip(meta.size());
        if (request.range() != null && range == null) {
            throw new StoreException(StoreException.Kind.FATAL, 416, "range " + request.range().toHttpHeader() + " starts past the end of "
                    + request.key() + " (" + meta.size() + " bytes)", null);
        }
        if (range == null) {
            return new ObjectContent(meta, null, InputStream.nullInputStream());
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            ObjectMeta held = present(copy, meta);
            if (held == null) {
                fill(meta, copy);
                continue;
            }
            ObjectContent c = tier.get(GetRequest.range(copy, range));
            hits.increment();
            bytesFromTier.add(range.length());
            return new ObjectContent(meta, range, c.stream());
        }
        // the mount refuses to keep it (full, read-only): serve from upstream rather than fail the read
        return delegate.get(request.withIfMatch(meta.etag()));
    }

    /** The copy's metadata when a sound copy is there; a copy of the wrong size is removed. */
    private ObjectMeta present(ObjectKey copy, ObjectMeta meta) throws IOException {
        ObjectMeta held;
        try {
            held = tier.head(copy);
        } catch (ObjectNotFoundException e) {
            return null;
        }
        if (held.size() != meta.size()) {
            damaged.increment();
            LOG.warn("shared tier copy of {} holds {} bytes, not {}: removing it", meta.key(), held.size(), meta.size());
            tier.delete(copy);
            return null;
        }
        return held;
    }

    private void fill(ObjectMeta meta, ObjectKey copy) throws IOException {
        Path temp = Files.createTempFile("ferry-shared-", ".fill");
        try {
            try (ObjectContent c = delegate.get(new GetRequest(meta.key(), null, meta.etag()))) {
                Files.copy(c.stream(), temp, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
            if (Files.size(temp) != meta.size()) {
                throw new StoreException(StoreException.Kind.RETRYABLE, 0, "upstream sent " + Files.size(temp) + " of " + meta.size()
                        + " bytes of " + meta.key(), null);
            }
            tier.put(copy, PutBody.ofFile(temp));
            fills.increment();
            bytesFilled.add(meta.size());
        } catch (StoreException e) {
            if (e.kind() == StoreException.Kind.PRECONDITION_FAILED) {
                metadata.remove(meta.key());
            }
            throw e;
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    @Override
    public ObjectMeta put(ObjectKey key, PutBody body) throws IOException {
        metadata.remove(key);
        return delegate.put(key, body);
    }

    @Override
    public void delete(ObjectKey key) throws IOException {
        metadata.remove(key);
        delegate.delete(key);
    }

    @Override
    public ObjectMeta completeMultipart(MultipartUpload upload, java.util.List<CompletedPart> parts) throws IOException {
        metadata.remove(upload.key());
        return multipart().completeMultipart(upload, parts);
    }
}
