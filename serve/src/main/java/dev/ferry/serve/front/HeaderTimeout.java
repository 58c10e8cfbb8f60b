package dev.ferry.serve.front;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a connection whose request line and headers take longer than the timeout to arrive, counted from
 * their first byte: a client sending its headers a byte a second would otherwise hold a connection (and
 * its buffers) for as long as it likes, since each byte resets the idle timer. An idle keep-alive
 * connection is not affected (the idle timer governs it), nor is a request whose reply is being written.
 *
 * <p>Two handlers share the state: {@link #bytes()} goes before the HTTP codec and starts the clock on a
 * request's first byte; {@link #requests()} goes after it and stops the clock when the codec has parsed the
 * headers, and tells when a request's reply has been written, from which the next request's bytes count.
 * Not thread-safe: one instance per connection, used on its event loop.
 */
final class HeaderTimeout {
    private static final Logger LOG = LoggerFactory.getLogger(HeaderTimeout.class);

    private final long timeoutNanos;
    /** Between a request's last byte being parsed and its reply written, the next request's bytes wait. */
    private boolean awaitingHeaders = true;
    private boolean replying;
    private ScheduledFuture<?> timer;

    HeaderTimeout(Duration timeout) {
        this.timeoutNanos = timeout.toNanos();
    }

    ChannelHandler bytes() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (awaitingHeaders && timer == null && msg instanceof ByteBuf b && b.isReadable()) {
                    timer = ctx.executor().schedule(() -> expire(ctx), timeoutNanos, TimeUnit.NANOSECONDS);
                }
                ctx.fireChannelRead(msg);
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                stop();
                ctx.fireChannelInactive();
            }
        };
    }

    ChannelHandler requests() {
        return new ChannelDuplexHandler() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (msg instanceof HttpRequest) {
                    stop();
                    awaitingHeaders = false;
                    replying = true;
                }
                ctx.fireChannelRead(msg);
            }

            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                boolean interim = msg instanceof HttpResponse r && r.status().codeClass() == HttpStatusClass.INFORMATIONAL;
                if (msg instanceof LastHttpContent && !interim) { // a FullHttpResponse is one too; 100 Continue is not the reply
                    promise = promise.unvoid();
                    promise.addListener(f -> {
                        replying = false;
                        awaitingHeaders = true;
                    });
                }
                ctx.write(msg, promise);
            }
        };
    }

    private void expire(ChannelHandlerContext ctx) {
        timer = null;
        if (replying) {
            // bytes of a pipelined request came while the previous one is answered: its headers are not
            // being read yet; count again once that reply is written
            awaitingHeaders = true;
            return;
        }
        LOG.debug("closing {}: its request headers took over {} ms", ctx.channel().remoteAddress(), timeoutNanos / 1_000_000);
        ctx.close();
    }

    private void stop() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
