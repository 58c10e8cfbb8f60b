package dev.ferry.store.chain;

import dev.ferry.store.BlockReadingInputStream;
import dev.ferry.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * Streams a long range as consecutive parts fetched in parallel: the first part streams straight from its
 * response while up to {@code concurrency} later parts are fetched into memory, in order, ahead of the
 * reader. Memory is bounded by {@code concurrency * partSize} per stream, and by the store's {@link Budget} over
 * all of its streams: a part that does not fit is not fetched ahead, but streamed when the reader gets to it.
 *
 * <p>Not thread-safe: one reader.
 */
final class ParallelRangeStream extends BlockReadingInputStream {
    /** Fetches {@code length} bytes at {@code offset} completely (a ranged GET pinned to one ETag). */
    @FunctionalInterface
    interface PartFetcher {
        byte[] fetch(long offset, int length) throws IOException;
    }

    /** Opens {@code length} bytes at {@code offset} as a stream (a ranged GET pinned to one ETag, not read yet). */
    @FunctionalInterface
    interface PartOpener {
        InputStream open(long offset, int length) throws IOException;
    }

    /**
     * Bytes of parts held in memory ahead of their readers, for all the streams of one store. A part's bytes are
     * taken before it is fetched and given back once its reader has read it, or left. A part cancelled while its
     * fetch runs gives its bytes back at once; its array lives until that fetch ends, so the bound is exceeded by
     * at most the parts of readers that just left.
     *
     * <p>Thread-safe.
     */
    static final class Budget {
        private final long max;
        private long taken; // guarded by this

        Budget(long max) {
            this.max = max;
        }

        synchronized boolean tryTake(long bytes) {
            if (taken + bytes > max) {
                return false;
            }
            taken += bytes;
            return true;
        }

        synchronized void give(long bytes) {
            taken -= bytes;
        }

        synchronized long taken() {
            return taken;
        }
    }

    private record Part(int length, Future<byte[]> bytes) {
    }

    private final PartFetcher fetcher;
    private final PartOpener opener;
    private final Budget budget;
    private final ExecutorService executor;
    private final int concurrency;
    private final long partSize;
    private final long end;
    private final Deque<Part> ahead = new ArrayDeque<>();
    private long nextOffset;
    private InputStream current;
    private long currentHeld; // budget bytes held by the part being read (0: it is streamed)
    private long currentLeft = -1; // bytes a streamed part still owes (-1: not counted)
    private boolean closed;

    ParallelRangeStream(InputStream first, long firstEnd, long end, long partSize, int concurrency,
            PartFetcher fetcher, PartOpener opener, Budget budget, ExecutorService executor) {
        this.current = first;
        this.nextOffset = firstEnd;
        this.end = end;
        this.partSize = partSize;
        this.concurrency = concurrency;
        this.fetcher = fetcher;
        this.opener = opener;
        this.budget = budget;
        this.executor = executor;
        fill();
    }

    private void fill() {
        while (ahead.size() < concurrency && nextOffset < end) {
            long offset = nextOffset;
            int length = (int) Math.min(partSize, end - offset);
            if (!budget.tryTake(length)) {
                return; // over the store's budget: streamed when the reader gets there, unless room comes first
            }
            ahead.add(new Part(length, executor.submit(() -> fetcher.fetch(offset, length))));
            nextOffset += length;
        }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (closed) {
            throw new IOException("stream closed");
        }
        if (len == 0) {
            return 0;
        }
        while (true) {
            if (currentLeft == 0) { // a streamed part read whole
                nextPart();
                if (current == null) {
                    return -1;
                }
                continue;
            }
            int n = current.read(b, off, currentLeft < 0 ? len : (int) Math.min(len, currentLeft));
            if (n >= 0) {
                if (currentLeft > 0) {
                    currentLeft -= n;
                }
                return n;
            }
            if (currentLeft > 0) {
                throw new StoreException(StoreException.Kind.RETRYABLE, 0, "a part ended " + currentLeft + " bytes short", null);
            }
            nextPart();
            if (current == null) {
                return -1;
            }
        }
    }

    /** Moves to the next part: fetched ahead, or streamed now; null at the end. */
    private void nextPart() throws IOException {
        current.close();
        current = null;
        budget.give(currentHeld);
        currentHeld = 0;
        currentLeft = -1;
        fill(); // room may have come since
        Part next = ahead.poll();
        if (next != null) {
            byte[] bytes;
            try {
                bytes = await(next.bytes());
            } catch (IOException e) {
                budget.give(next.length());
                throw e;
            }
            current = new java.io.ByteArrayInputStream(bytes);
            currentHeld = next.length();
            fill();
        } else if (nextOffset < end) {
            int length = (int) Math.min(partSize, end - nextOffset);
            current = opener.open(nextOffset, length);
            currentLeft = length;
            nextOffset += length;
        }
    }

    private static byte[] await(Future<byte[]> future) throws IOException {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a part");
        } catch (CancellationException e) {
            throw new IOException("part fetch was cancelled", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException("part fetch failed: " + e.getCause(), e.getCause());
        }
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        for (Part p : ahead) {
            p.bytes().cancel(true);
            budget.give(p.length());
        }
        ahead.clear();
        budget.give(currentHeld);
        currentHeld = 0;
        if (current != null) {
            current.close();
        }
    }
}
