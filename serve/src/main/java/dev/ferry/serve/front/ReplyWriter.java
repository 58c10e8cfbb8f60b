package dev.ferry.serve.front;

import dev.ferry.serve.protocol.Reply;
import dev.ferry.store.FileRegionReadable;
import dev.ferry.store.ObjectContent;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a {@link Reply} on a connection, each kind its own way: a full reply from memory; the local tier's block
 * files with sendfile ({@link SharedFileRegion}); a store's read streamed on a worker thread with back-pressure,
 * waiting whenever the socket's buffer is full, so a client that does not read holds at most the buffer's high
 * watermark and one write. Counts what it sent in the {@link ServeStats}. Thread-safe: {@link #write} runs on the
 * connection's event loop, the streaming on the executor.
 */
final class ReplyWriter {
    private static final Logger LOG = LoggerFactory.getLogger(ReplyWriter.class);
    private static final int STREAM_CHUNK = 256 * 1024;

    /** What follows a reply, on the event loop. */
    interface Then {
        /** The reply's last write is {@code last}; {@code resident} is the read of block files to close once it is written, or null. */
        void written(ChannelFuture last, ObjectContent resident);

        /** A streamed reply failed after its status line left: the only honest signal left is to cut the connection short. */
        void cut();
    }

    private final ServeStats stats;
    private final Executor executor;

    /** {@code executor}: where a streamed reply's copy runs (it blocks on the store and on the socket). */
    ReplyWriter(ServeStats stats, Executor executor) {
        this.stats = stats;
        this.executor = executor;
    }

    /**
     * On the event loop: writes {@code reply}, without its body when {@code head}; {@code decorate} adds the headers
     * every reply carries. {@code then} hears when it is written.
     */
    void write(ChannelHandlerContext ctx, Reply reply, boolean head, Consumer<HttpHeaders> decorate, Then then) {
        Channel ch = ctx.channel();
        switch (reply) {
            case Reply.Full f -> {
                FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, f.status(),
                        f.headOnly() || head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(f.body()));
                res.headers().set(f.headers());
                if (!res.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
                    res.headers().set(HttpHeaderNames.CONTENT_LENGTH, f.body().length);
                }
                decorate.accept(res.headers());
                stats.served(f.status().code(), 0, 0);
                then.written(ch.writeAndFlush(res), null);
            }
            case Reply.Files files -> {
                HttpResponse res = new DefaultHttpResponse(HttpVersion.HTTP_1_1, files.status());
                res.headers().set(files.headers());
                decorate.accept(res.headers());
                ch.write(res);
                long bytes = 0;
                // every block is on disk: the regions are all there, and taking them never waits
                FileRegionReadable regions = (FileRegionReadable) files.content().stream();
                try {
                    for (FileRegionReadable.Region region; (region = regions.nextRegion(Integer.MAX_VALUE)) != null; ) {
                        ch.write(new SharedFileRegion(region));
                        bytes += region.length();
                    }
                } catch (IOException | RuntimeException e) {
                    LOG.debug("cached blocks of {} bytes cut after {}: {}", files.content().length(), bytes, e.toString());
                }
                if (bytes != files.content().length()) {
                    // the status line is gone: the only honest signal left is to cut the connection short
                    closeQuietly(files.content());
                    stats.cut();
                    ch.flush();
                    then.cut();
                    return;
                }
                stats.served(files.status().code(), bytes, 0);
                then.written(ch.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT), files.content());
            }
            case Reply.Streamed s -> {
                HttpResponse res = new DefaultHttpResponse(HttpVersion.HTTP_1_1, s.status());
                res.headers().set(s.headers());
                decorate.accept(res.headers());
                ch.writeAndFlush(res);
                executor.execute(() -> stream(ctx, s.content(), then));
            }
        }
    }

    /**
     * On a worker thread: copies a store read to the socket, waiting whenever the socket's buffer is full. Bytes the
     * store has in a local file (the local tier's blocks, being fetched or resident) go file-to-socket and hold no
     * memory at all; the rest is copied, a chunk per write.
     */
    private void stream(ChannelHandlerContext ctx, ObjectContent content, Then then) {
        Channel ch = ctx.channel();
        long sent = 0;
        try (content) {
            InputStream in = content.stream();
            FileRegionReadable files = in instanceof FileRegionReadable f ? f : null;
            while (sent < content.length()) {
                int max = (int) Math.min(STREAM_CHUNK, content.length() - sent);
                FileRegionReadable.Region region = files == null ? null : files.nextRegion(max);
                Object message;
                long n;
                if (region != null) {
                    message = new SharedFileRegion(region);
                    n = region.length();
                } else {
                    ByteBuf buf = ch.alloc().buffer(max);
                    try {
                        n = buf.writeBytes(in, max);
                    } catch (IOException | RuntimeException e) {
                        buf.release();
                        throw e;
                    }
                    if (n < 0) {
                        buf.release();
                        throw new IOException("the store's stream ended " + (content.length() - sent) + " bytes early");
                    }
                    message = new DefaultHttpContent(buf);
                }
                sent += n;
                ChannelFuture f = ch.writeAndFlush(message);
                if (!ch.isWritable()) {
                    f.sync();
                }
                if (!ch.isActive()) {
                    throw new IOException("the client went away");
                }
            }
            stats.served(200, 0, sent);
            ChannelFuture last = ch.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            ctx.executor().execute(() -> then.written(last, null));
        } catch (Exception e) {
            // the status line is gone: the only honest signal left is to cut the connection short
            LOG.debug("stream of {} bytes cut after {}: {}", content.length(), sent, e.toString());
            stats.cut();
            ctx.executor().execute(then::cut);
        }
    }

    /** Closes a reply's read that is not sent on (cut short, or never written): nothing more can be said of a failure. */
    static void closeQuietly(ObjectContent content) {
        try {
            content.close();
        } catch (IOException e) {
            LOG.debug("closing a reply's read: {}", e.toString());
        }
    }
}
