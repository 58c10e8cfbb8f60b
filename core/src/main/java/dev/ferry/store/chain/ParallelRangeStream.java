package dev.ferry.store.chain;

import dev.ferry.store.BlockReadingInputStream;
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
 * reader. Memory is bounded by {@code concurrency * partSize}.
 *
 * <p>Not thread-safe: one reader.
 */
final class ParallelRangeStream extends BlockReadingInputStream {
    /** Fetches {@code length} bytes at {@code offset} completely (a ranged GET pinned to one ETag). */
    @FunctionalInterface
    interface PartFetcher {
        byte[] fetch(long offset, int length) throws IOException;
    }

    private final PartFetcher fetcher;
    private final ExecutorService executor;
    private final int concurrency;
    private final long partSize;
    private final long end;
    private final Deque<Future<byte[]>> ahead = new ArrayDeque<>();
    private long nextOffset;
    private InputStream current;
    private boolean closed;

    ParallelRangeStream(InputStream first, long firstEnd, long end, long partSize, int concurrency,
            PartFetcher fetcher, ExecutorService executor) {
        this.current = first;
        this.nextOffset = firstEnd;
        this.end = end;
        this.partSize = partSize;
        this.concurrency = concurrency;
        this.fetcher = fetcher;
        this.executor = executor;
        fill();
    }

    private void fill() {
        while (ahead.size() < concurrency && nextOffset < end) {
            long offset = nextOffset;
            int length = (int) Math.min(partSize, end - offset);
            ahead.add(executor.submit(() -> fetcher.fetch(offset, length)));
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
            int n = current.read(b, off, len);
            if (n >= 0) {
                return n;
            }
            current.close();
            Future<byte[]> next = ahead.poll();
            if (next == null) {
                return -1;
            }
            current = new java.io.ByteArrayInputStream(await(next));
            fill();
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
        for (Future<byte[]> f : ahead) {
            f.cancel(true);
        }
        ahead.clear();
        current.close();
    }
}
