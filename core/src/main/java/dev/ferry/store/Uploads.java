package dev.ferry.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Uploads a file of any size: one PUT up to {@code partSize}, otherwise a multipart upload of
 * {@code partSize} parts; or a multipart upload of given part sizes.
 */
public final class Uploads {
    private Uploads() {
    }

    public static ObjectMeta putFile(ObjectStore store, ObjectKey key, Path file, long size, long partSize, int parallelism)
            throws IOException {
        if (size <= partSize) {
            return store.put(key, PutBody.ofFile(file));
        }
        List<Long> sizes = new ArrayList<>();
        for (long offset = 0; offset < size; offset += partSize) {
            sizes.add(Math.min(partSize, size - offset));
        }
        return putParts(store, key, file, sizes, ObjectAttributes.NONE, parallelism);
    }

    /**
     * Uploads a file as a multipart upload of parts of exactly {@code partSizes} (so the object gets the ETag
     * a client's upload of the same parts got), {@code parallelism} in flight, aborted if any part fails for good.
     */
    public static ObjectMeta putParts(ObjectStore store, ObjectKey key, Path file, List<Long> partSizes, ObjectAttributes attributes,
            int parallelism) throws IOException {
        MultipartOperations multipart = MultipartOperations.of(store);
        // an object's checksum goes as S3 takes it for an upload: the algorithm and type declared at the start,
        // each part's value with the part; the store computes the object's (a composite of the same parts is the same)
        Checksum kept = Checksum.of(attributes);
        // (no multipart upload keeps a whole object's SHA: such an object goes without its checksum)
        Checksum declared = kept == null ? Checksum.declaredIn(attributes)
                : kept.type() == Checksum.Type.FULL_OBJECT && !kept.algorithm().combines() ? null
                : Checksum.declared(kept.algorithm(), kept.type());
        ObjectAttributes startWith = declared == null ? Checksum.strip(attributes) : declared.applyTo(attributes);
        Checksum.Algorithm partAlgorithm = declared == null ? null : declared.algorithm();
        MultipartUpload upload = multipart.startMultipart(key, startWith);
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, parallelism), r -> {
            Thread t = new Thread(r, "ferry-upload-part");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<CompletedPart>> parts = new ArrayList<>();
            long offset = 0;
            for (int i = 0; i < partSizes.size(); i++) {
                long from = offset;
                long length = partSizes.get(i);
                int partNumber = i + 1;
                parts.add(pool.submit(() -> {
                    PutBody part = slice(file, from, length);
                    if (partAlgorithm == null) {
                        return multipart.uploadPart(upload, partNumber, part);
                    }
                    Checksum sum;
                    try (InputStream in = part.open()) {
                        sum = Checksum.ofStream(partAlgorithm, in);
                    }
                    CompletedPart done = multipart.uploadPart(upload, partNumber, part.withAttributes(sum.applyTo(ObjectAttributes.NONE)));
                    return new CompletedPart(done.partNumber(), done.etag(), sum);
                }));
                offset += length;
            }
            List<CompletedPart> done = new ArrayList<>();
            for (Future<CompletedPart> f : parts) {
                done.add(f.get());
            }
            return multipart.completeMultipart(upload, done);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abortQuietly(multipart, upload);
            throw new java.io.InterruptedIOException("interrupted while uploading " + key);
        } catch (ExecutionException e) {
            abortQuietly(multipart, upload);
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException("uploading " + key + " failed: " + e.getCause(), e.getCause());
        } catch (IOException | RuntimeException e) {
            abortQuietly(multipart, upload);
            throw e;
        } finally {
            pool.shutdownNow();
        }
    }

    private static void abortQuietly(MultipartOperations multipart, MultipartUpload upload) {
        try {
            multipart.abortMultipart(upload);
        } catch (IOException ignored) {
            // an orphaned upload is the store's to expire
        }
    }

    /** {@code length} bytes of a file from {@code offset}, re-openable for retries. */
    public static PutBody slice(Path file, long offset, long length) {
        return new PutBody() {
            @Override
            public long length() {
                return length;
            }

            @Override
            public InputStream open() throws IOException {
                FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
                ch.position(offset);
                return new BoundedInputStream(Channels.newInputStream(ch), length);
            }
        };
    }
}
