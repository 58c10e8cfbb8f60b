package dev.ferry.serve.front;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.ArrayList;

/**
 * HTTP/1.1 pipelining, one exchange at a time: from the moment a request is to be answered (its last byte read, or
 * an error answered before it) until its reply is written, the connection reads no more, and what was read
 * meanwhile (a pipelined request) waits here, in order; then it goes on to the {@link S3Handler} and reading
 * resumes. Back-pressure on the way in: a client holds at most what one read brought while it is answered. Sits in
 * front of the {@link S3Handler}, which says when a reply is due and when it is written.
 *
 * <p>Not thread-safe: one instance per connection, used on its event loop.
 */
final class PipelinedRequests extends ChannelInboundHandlerAdapter {
    private final ArrayDeque<Object> queued = new ArrayDeque<>();
    /** True from the moment a reply is due until it is written. */
    private boolean replying;
    private ChannelHandlerContext ctx;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (replying || !queued.isEmpty()) {
            queued.add(msg); // a pipelined request: served after the one in progress
            return;
        }
        ctx.fireChannelRead(msg);
    }

    /** A reply is due: reading stops until it is written. */
    void replying() {
        ctx.channel().config().setAutoRead(false);
        replying = true;
    }

    /** The reply is written and the connection stays: what was read meanwhile goes on, then reading resumes. */
    void written() {
        replying = false;
        while (!replying && !queued.isEmpty()) {
            ctx.fireChannelRead(queued.poll());
        }
        if (!replying) {
            ctx.channel().config().setAutoRead(true);
            ctx.channel().read();
        }
    }

    /**
     * The reply answered an error while the client was still sending the request's body, and the connection is to
     * close: a {@link BodyDrain} takes this handler's place and drops the rest, what was read meanwhile first.
     */
    void drainRest() {
        BodyDrain drain = new BodyDrain();
        ctx.pipeline().replace(this, "body-drain", drain);
        drain.start(new ArrayList<>(queued));
        queued.clear();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        queued.forEach(ReferenceCountUtil::release);
        queued.clear();
        super.channelInactive(ctx);
    }
}
