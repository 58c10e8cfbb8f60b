package dev.ferry.serve.front;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The end of a connection whose error was answered while its client was still sending a request's body: reads the
 * rest of the body and drops it, then closes. Closing at once, with request bytes unread, makes the kernel reset the
 * connection, and the client may lose the answer it has not read yet. At most 64 MiB or 5 s, then it closes anyway.
 * Put in the pipeline by {@link PipelinedRequests#drainRest} once the answer is written.
 *
 * <p>Not thread-safe: one instance per connection, used on its event loop.
 */
final class BodyDrain extends ChannelInboundHandlerAdapter {
    private static final long MAX_DRAIN_BYTES = 64L << 20;
    private static final long MAX_DRAIN_SECONDS = 5;

    private ChannelHandlerContext ctx;
    private long drained;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Drops {@code pending} (read before this handler was in place), then reads and drops the rest. */
    void start(List<Object> pending) {
        for (Object m : pending) {
            drain(m);
        }
        Channel ch = ctx.channel();
        if (ch.isActive()) {
            ch.eventLoop().schedule(() -> ch.close(), MAX_DRAIN_SECONDS, TimeUnit.SECONDS);
            ch.config().setAutoRead(true);
            ch.read();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        drain(msg);
    }

    private void drain(Object msg) {
        try {
            if (msg instanceof HttpContent c) {
                drained += c.content().readableBytes();
            }
            if (msg instanceof LastHttpContent || msg instanceof HttpRequest || drained > MAX_DRAIN_BYTES) {
                ctx.close();
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }
}
