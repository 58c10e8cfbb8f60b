package dev.ferry.serve.front;

import dev.ferry.serve.jobs.ControlApi;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.RequestBody;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.SigV4;
import dev.ferry.serve.s3.S3Service;
import dev.ferry.store.ObjectContent;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's HTTP exchanges, the last stage of its pipeline: parses a request's target
 * ({@link RequestTarget}) and headers, checks its signature, receives its body (checked, spooled by
 * {@link RequestBody}), runs the operation (a hit on the event loop, anything else on a worker thread) and has the
 * {@link ReplyWriter} write the reply. One request at a time per connection: {@link PipelinedRequests}, in front of
 * this handler, holds what comes while a request is answered; an error answered before a body was all read closes
 * the connection after a {@link BodyDrain}.
 *
 * <p>Not thread-safe: one instance per connection; its state is touched on the event loop only.
 */
final class S3Handler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(S3Handler.class);
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);
    private static final AtomicLong REQUEST_IDS = new AtomicLong();

    private final ServeContext context;
    private final PipelinedRequests pipelining;
    private final ReplyWriter replies;
    private HttpRequest request;
    private RequestTarget route;
    private RequestBody body;
    private long unexpectedBodyBytes;
    private S3Error failed;
    private String requestId;
    private boolean keepAlive;
    private boolean head;
    private long startNanos;
    /** An error was answered while the client was still sending its body: read the rest and drop it before closing. */
    private boolean lingering;

    /** {@code pipelining}: the stage in front of this one, which holds pipelined requests while one is answered. */
    S3Handler(ServeContext context, PipelinedRequests pipelining) {
        this.context = context;
        this.pipelining = pipelining;
        this.replies = new ReplyWriter(context.stats(), context.executor());
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        context.stats().connectionOpened();
        ctx.channel().config().setAutoRead(true);
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        context.stats().connectionClosed();
        discardBody();
        super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpRequest r) {
                onRequest(ctx, r);
            }
            if (msg instanceof HttpContent c && request != null) {
                onContent(ctx, c);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onRequest(ChannelHandlerContext ctx, HttpRequest r) {
        request = r;
        startNanos = context.clock().nanoTime();
        requestId = Long.toHexString(context.clock().epochMillis()) + "-" + Long.toHexString(REQUEST_IDS.incrementAndGet());
        keepAlive = HttpUtil.isKeepAlive(r);
        head = r.method().equals(HttpMethod.HEAD);
        failed = null;
        route = null;
        body = null;
        unexpectedBodyBytes = 0;
        if (r.decoderResult().isFailure()) {
            Throwable cause = r.decoderResult().cause();
            S3Error e = cause instanceof TooLongFrameException
                    ? S3Error.badRequest("RequestHeaderSectionTooLarge", "the request line or headers are over the daemon's limit ("
                            + context.limits().maxHeaderBytes() + " bytes)")
                    : S3Error.badRequest("BadRequest", "the request is not valid HTTP/1.1: " + cause.getMessage());
            keepAlive = false;
            respondError(ctx, e);
            return;
        }
        try {
            route = RequestTarget.parse(r.uri(), context.virtualHosts().bucketOf(r.headers().get(HttpHeaderNames.HOST)));
            SigV4.Signed signed = null;
            if (context.sigV4() != null && !(route.api() && context.api().isPublic(r.method(), route.rawPath()))) {
                signed = context.sigV4().verify(r.method().name(), route.rawPath(), route.rawQuery(), r.headers(), context.clock().now());
            }
            // (a PutObjectAcl's body is a policy in XML, held in memory as other XML bodies)
            boolean objectData = !route.api() && route.key() != null && r.method().equals(HttpMethod.PUT) && !route.query().containsKey("acl");
            // an object PUT with Content-Length: 0 has a body too: the empty object
            if (expectsBody(r) || (objectData && r.headers().contains(HttpHeaderNames.CONTENT_LENGTH))) {
                // a CompleteMultipartUpload's x-amz-checksum-* is the whole object's (FULL_OBJECT), not its XML's
                boolean complete = !route.api() && route.key() != null && r.method().equals(HttpMethod.POST) && route.query().containsKey("uploadId");
                body = new RequestBody(r.headers(), objectData ? context.spoolDir() : null,
                        objectData ? context.limits().maxObjectBytes()
                                : route.api() ? ControlApi.maxBodyBytes(route.rawPath(), context.limits().maxXmlBytes()) : context.limits().maxXmlBytes(),
                        signed, !complete);
            }
        } catch (S3Error e) {
            failed = e;
        } catch (IOException e) {
            failed = new S3Error(507, "InsufficientStorage", "cannot spool the request body: " + e.getMessage());
        }
        if (failed != null && expectsBody(r)) {
            // answer now, without storing a body we would throw away, then close once it has been read past
            keepAlive = false;
            lingering = true;
            respondError(ctx, failed);
            return;
        }
        if (HttpUtil.is100ContinueExpected(r)) {
            ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE, Unpooled.EMPTY_BUFFER));
        }
    }

    private static boolean expectsBody(HttpRequest r) {
        return HttpUtil.isTransferEncodingChunked(r) || HttpUtil.getContentLength(r, 0L) > 0;
    }

    private void onContent(ChannelHandlerContext ctx, HttpContent c) {
        if (c.decoderResult().isFailure()) {
            // Netty ends a body whose chunked framing broke with a failed *last* content: without this check
            // the bytes before the break would be stored as if they were the whole body
            keepAlive = false; // the decoder discards the rest of this connection's bytes
            lingering = true;
            if (failed == null) {
                failed = S3Error.badRequest("IncompleteBody", "the request body's chunked framing is broken ("
                        + c.decoderResult().cause().getMessage() + "); nothing was stored");
            }
        }
        if (failed == null) {
            try {
                if (body != null) {
                    body.feed(c.content().nioBuffer());
                } else if ((unexpectedBodyBytes += c.content().readableBytes()) > context.limits().maxXmlBytes()) {
                    failed = S3Error.badRequest("MaxMessageLengthExceeded", "the request body is over the limit of "
                            + context.limits().maxXmlBytes() + " bytes");
                }
            } catch (S3Error e) {
                failed = e;
            } catch (IOException e) {
                failed = new S3Error(507, "InsufficientStorage", "cannot spool the request body: " + e.getMessage());
            }
            if (failed != null && !(c instanceof LastHttpContent)) {
                keepAlive = false;
                lingering = true;
                respondError(ctx, failed);
                return;
            }
        }
        if (!(c instanceof LastHttpContent)) {
            return;
        }
        if (request == null) {
            return; // already answered (an error mid-body)
        }
        pipelining.replying();
        if (failed == null && body != null) {
            try {
                body.finish();
            } catch (S3Error e) {
                failed = e;
            } catch (IOException e) {
                failed = new S3Error(507, "InsufficientStorage", "cannot spool the request body: " + e.getMessage());
            }
        }
        if (failed != null) {
            respondError(ctx, failed);
            return;
        }
        HttpRequest r = request;
        RequestTarget rt = route;
        RequestBody b = body;
        if (!rt.api() && b == null) {
            try {
                Reply fast = context.s3().tryFast(new S3Service.Request(r.method(), rt.bucket(), rt.key(), rt.query(), r.headers(), null));
                if (fast != null) {
                    write(ctx, fast, null);
                    return;
                }
            } catch (S3Error e) {
                write(ctx, errorReply(e, rt), null);
                return;
            } catch (IOException | RuntimeException e) {
                // not answerable here: the worker thread gives it the full treatment
            }
        }
        context.executor().execute(() -> serve(ctx, r, rt, b));
        if (rt.api() && context.api().watchesClient(r.method(), rt.rawPath())) {
            // With reading off while a request is served, a client that closes is noticed only at the reply:
            // one read lets the close through (a pipelined request is queued), so a long API request (a job
            // registration) sees its client go and stops (ClientGone).
            ctx.read();
        }
    }

    /** Runs on a virtual thread: the operation may block on the store. */
    private void serve(ChannelHandlerContext ctx, HttpRequest r, RequestTarget rt, RequestBody b) {
        Reply reply;
        try {
            if (rt.api() && rt.rawPath().equals("/_ferry") && (r.method().equals(HttpMethod.GET) || r.method().equals(HttpMethod.HEAD))) {
                reply = toStatusPage(rt); // the page asks for its data relative to its own address
            } else if (rt.api()) {
                Channel ch = ctx.channel();
                reply = context.api().handle(r.method(), rt.rawPath(), rt.query(), b == null ? new byte[0] : b.bytes(), () -> !ch.isActive());
            } else {
                S3Service.Request s3 = new S3Service.Request(r.method(), rt.bucket(), rt.key(), rt.query(), r.headers(), b);
                reply = context.s3().handle(s3);
            }
        } catch (S3Error e) {
            reply = errorReply(e, rt);
        } catch (IOException e) {
            reply = errorReply(S3Error.from(e), rt);
        } catch (RuntimeException e) {
            LOG.warn("request {} {} failed", r.method(), r.uri(), e);
            reply = errorReply(new S3Error(500, "InternalError", "the daemon failed: " + e), rt);
        }
        Reply done = reply;
        ctx.executor().execute(() -> write(ctx, done, b));
    }

    private static Reply toStatusPage(RequestTarget rt) {
        HttpHeaders h = new DefaultHttpHeaders();
        h.set(HttpHeaderNames.LOCATION, "/_ferry/" + (rt.rawQuery() == null ? "" : "?" + rt.rawQuery()));
        return new Reply.Full(HttpResponseStatus.MOVED_PERMANENTLY, h, new byte[0], false);
    }

    private Reply errorReply(S3Error e, RequestTarget rt) {
        context.stats().error(e.status());
        if (rt.api()) {
            return ControlApi.error(e);
        }
        return Reply.error(e, rt.rawPath(), requestId, head);
    }

    private void respondError(ChannelHandlerContext ctx, S3Error e) {
        pipelining.replying();
        Reply reply = route != null && route.api() ? ControlApi.error(e) : Reply.error(e, route == null ? null : route.rawPath(), requestId, head);
        if (route == null || !route.api()) {
            context.stats().error(e.status());
        }
        write(ctx, reply, body);
        request = null;
    }

    private void decorate(HttpHeaders h) {
        h.set("x-amz-request-id", requestId);
        h.set(HttpHeaderNames.SERVER, "ferry");
        h.set(HttpHeaderNames.DATE, HTTP_DATE.format(context.clock().now()));
        if (keepAlive) {
            if (!request.protocolVersion().isKeepAliveDefault()) {
                h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
        } else {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
    }

    /** On the event loop: writes the reply, then reads the next request (or closes). */
    private void write(ChannelHandlerContext ctx, Reply reply, RequestBody b) {
        if (request == null) {
            abandon(reply); // the connection went while the reply was made
            return;
        }
        replies.write(ctx, reply, head, this::decorate, new ReplyWriter.Then() {
            @Override
            public void written(ChannelFuture last, ObjectContent resident) {
                finish(last, b, resident);
            }

            @Override
            public void cut() {
                discard(b);
                ctx.channel().close();
            }
        });
    }

    private void finish(ChannelFuture written, RequestBody b, ObjectContent resident) {
        boolean close = !keepAlive;
        long elapsed = context.clock().nanoTime() - startNanos;
        request = null;
        written.addListener((ChannelFutureListener) f -> {
            discard(b);
            if (resident != null) {
                resident.close();
            }
            context.stats().latency(elapsed);
            if (close && lingering && f.isSuccess()) {
                pipelining.drainRest(); // closing with request bytes unread could cost the client this answer
                return;
            }
            if (close || !f.isSuccess()) {
                f.channel().close();
                return;
            }
            pipelining.written();
        });
    }

    /** Lets go of what a reply that is never written holds: a read of the store, or of cached blocks. */
    private static void abandon(Reply reply) {
        ObjectContent held = switch (reply) {
            case Reply.Files f -> f.content();
            case Reply.Streamed s -> s.content();
            case Reply.Full f -> null;
        };
        if (held != null) {
            ReplyWriter.closeQuietly(held);
        }
    }

    private void discardBody() {
        discard(body);
        body = null;
    }

    private static void discard(RequestBody b) {
        if (b != null) {
            b.close();
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            ctx.close(); // a client that stopped mid-request (or an idle keep-alive connection)
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
