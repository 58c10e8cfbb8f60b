package dev.ferry.store;

import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;
import java.util.function.LongConsumer;

/**
 * The bytes of a range, read from a stream that may break: when it fails or ends early, the rest of the
 * range (from the byte reached) comes from a stream the caller's {@link Resume} opens: another attempt
 * (retries), the next member of a group, the group after a peer. The Resume throws to give up. The caller
 * pins the ETag in what it opens, so bytes of two versions never mix. Not thread-safe: one reader.
 */
public final class ResumingStream extends BlockReadingInputStream {
    /** Opens the rest of the range after {@code failure}, or throws to end the read. */
    @FunctionalInterface
    public interface Resume {
        InputStream rest(ByteRange rest, IOException failure) throws IOException;
    }

    private final String what;
    private final ByteRange range;
    private final Resume resume;
    private final LongConsumer delivered;
    private InputStream current;
    private long position;

    /**
     * @param what      names the read in the error for a stream that ends early ("stream of s3://b/k")
     * @param delivered told of every run of bytes handed to the reader (for counting by source)
     */
    public ResumingStream(String what, ByteRange range, InputStream first, Resume resume, LongConsumer delivered) {
        this.what = what;
        this.range = Objects.requireNonNull(range, "range is null");
        this.current = first;
        this.resume = resume;
        this.delivered = delivered;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (position >= range.length()) {
            return -1;
        }
        if (len == 0) {
            return 0;
        }
        while (true) {
            try {
                int n = current.read(b, off, (int) Math.min(len, range.length() - position));
                if (n < 0) {
                    throw new StoreException(StoreException.Kind.RETRYABLE, 0, what + " ended early at byte " + (range.offset() + position),
                            null);
                }
                position += n;
                delivered.accept(n);
                return n;
            } catch (IOException e) {
                try {
                    current.close();
                } catch (IOException ignored) {
                    // it is already broken
                }
                current = resume.rest(ByteRange.of(range.offset() + position, range.length() - position), e);
            }
        }
    }

    @Override
    public void close() throws IOException {
        current.close();
    }
}
