package dev.ferry.serve.front;

import dev.ferry.cache.CachingStore;
import dev.ferry.serve.jobs.ControlApi;
import dev.ferry.serve.protocol.Keys;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.RequestBody;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.SigV4;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.serve.s3.S3Service;
import dev.ferry.store.FileRegionReadable;
import dev.ferry.store.ObjectContent;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultFileRegion;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import java.io.IOException;
import java.io.InputStream;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's HTTP exchanges: parses a request's target and headers, checks its signature, receives
 * its body (checked, spooled), runs the operation on a virtual thread and writes the reply: from memory,
 * streamed from the store with backpressure, or from block files with sendfile. One request at a time per
 * connection: reading stops while a request is served and resumes when its reply is written.
 */
final class S3Handler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(S3Handler.class);
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);
    private static final int STREAM_CHUNK = 256 * 1024;
    private static final AtomicLong REQUEST_IDS = new AtomicLong();

    private final ServeContext context;
    private HttpRequest request;
    private Route route;
    private RequestBody body;
    private long unexpectedBodyBytes;
    private S3Error failed;
    private String requestId;
    private boolean keepAlive;
    private boolean head;
    private long startNanos;
    /** True from a request's last byte until its reply is written: pipelined requests wait in {@code queued}. */
    private boolean busy;
    private final java.util.ArrayDeque<Object> queued = new java.util.ArrayDeque<>();
    /** An error was answered while the client was still sending its body: read the rest and drop it before closing. */
    private boolean lingering;
    private boolean draining;
    private long drained;
    private static final long MAX_DRAIN_BYTES = 64L << 20;
    private static final long MAX_DRAIN_SECONDS = 5;

    /** Where a request goes: an S3 bucket/key, or ferry's own API. */
    record Route(boolean api, String rawPath, String rawQuery, Map<String, List<String>> query, String bucket, String key) {
    }

    S3Handler(ServeContext context) {
        this.context = context;
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
        queued.forEach(io.netty.util.ReferenceCountUtil::release);
        queued.clear();
        super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (draining) {
            drain(ctx, msg);
            return;
        }
        if (busy || !queued.isEmpty()) {
            queued.add(msg); // a pipelined request: served after the one in progress
            return;
        }
        process(ctx, msg);
    }

    private void process(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpRequest r) {
                onRequest(ctx, r);
            }
            if (msg instanceof HttpContent c && request != null) {
                onContent(ctx, c);
            }
        } finally {
            io.netty.util.ReferenceCountUtil.release(msg);
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
            route = route(r.uri(), context.virtualHosts().bucketOf(r.headers().get(HttpHeaderNames.HOST)));
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
                        objectData ? context.limits().maxObjectBytes() : context.limits().maxXmlBytes(), signed, !complete);
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
        ctx.channel().config().setAutoRead(false);
        busy = true;
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
        Route rt = route;
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
    private void serve(ChannelHandlerContext ctx, HttpRequest r, Route rt, RequestBody b) {
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

    private static Reply toStatusPage(Route rt) {
        HttpHeaders h = new io.netty.handler.codec.http.DefaultHttpHeaders();
        h.set(HttpHeaderNames.LOCATION, "/_ferry/" + (rt.rawQuery() == null ? "" : "?" + rt.rawQuery()));
        return new Reply.Full(HttpResponseStatus.MOVED_PERMANENTLY, h, new byte[0], false);
    }

    private Reply errorReply(S3Error e, Route rt) {
        context.stats().error(e.status());
        if (rt.api()) {
            return ControlApi.error(e);
        }
        return Reply.error(e, rt.rawPath(), requestId, head);
    }

    private void respondError(ChannelHandlerContext ctx, S3Error e) {
        ctx.channel().config().setAutoRead(false);
        busy = true;
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
        HttpRequest r = request;
        if (r == null) {
            return;
        }
        Channel ch = ctx.channel();
        switch (reply) {
            case Reply.Full f -> {
                FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, f.status(),
                        f.headOnly() || head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(f.body()));
                res.headers().set(f.headers());
                if (!res.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
                    res.headers().set(HttpHeaderNames.CONTENT_LENGTH, f.body().length);
                }
                decorate(res.headers());
                context.stats().served(f.status().code(), 0, 0);
                finish(ch.writeAndFlush(res), b, null);
            }
            case Reply.Files files -> {
                HttpResponse res = new DefaultHttpResponse(HttpVersion.HTTP_1_1, files.status());
                res.headers().set(files.headers());
                decorate(res.headers());
                ch.write(res);
                long bytes = 0;
                for (CachingStore.FileRegion region : files.read().regions()) {
                    ch.write(new DefaultFileRegion(region.channel(), region.position(), region.length()));
                    bytes += region.length();
                }
                context.stats().served(files.status().code(), bytes, 0);
                finish(ch.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT), b, files.read());
            }
            case Reply.Streamed s -> {
                HttpResponse res = new DefaultHttpResponse(HttpVersion.HTTP_1_1, s.status());
                res.headers().set(s.headers());
                decorate(res.headers());
                ch.writeAndFlush(res);
                context.executor().execute(() -> stream(ctx, s.content(), b));
            }
        }
    }

    /**
     * On a virtual thread: copies a store read to the socket, waiting whenever the socket's buffer is full, so
     * a client that does not read holds at most the buffer's high watermark and one write. Bytes the store has in
     * a local file (the local tier's blocks, being fetched or resident) go file-to-socket and hold no memory at
     * all; the rest is copied, a chunk per write.
     */
    private void stream(ChannelHandlerContext ctx, ObjectContent content, RequestBody b) {
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
            context.stats().served(200, 0, sent);
            ChannelFuture last = ch.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            ctx.executor().execute(() -> finish(last, b, null));
        } catch (Exception e) {
            // the status line is gone: the only honest signal left is to cut the connection short
            LOG.debug("stream of {} bytes cut after {}: {}", content.length(), sent, e.toString());
            context.stats().cut();
            ctx.executor().execute(() -> {
                discard(b);
                ch.close();
            });
        }
    }

    private void finish(ChannelFuture written, RequestBody b, CachingStore.ResidentRead resident) {
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
                // Closing now, with request bytes unread, makes the kernel reset the connection, and the
                // client may lose the answer it has not read yet: read the rest of the body and drop it
                // (at most 64 MiB or 5 s), then close.
                ChannelHandlerContext ctx = f.channel().pipeline().context(this);
                draining = true;
                java.util.List<Object> pending = new java.util.ArrayList<>(queued);
                queued.clear();
                for (Object m : pending) {
                    drain(ctx, m);
                }
                if (f.channel().isActive()) {
                    f.channel().eventLoop().schedule(() -> f.channel().close(), MAX_DRAIN_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
                    f.channel().config().setAutoRead(true);
                    f.channel().read();
                }
                return;
            }
            if (close || !f.isSuccess()) {
                f.channel().close();
                return;
            }
            busy = false;
            while (!busy && !queued.isEmpty()) {
                process(f.channel().pipeline().context(this), queued.poll());
            }
            if (!busy) {
                f.channel().config().setAutoRead(true);
                f.channel().read();
            }
        });
    }

    private void drain(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpContent c) {
                drained += c.content().readableBytes();
            }
            if (msg instanceof LastHttpContent || msg instanceof HttpRequest || drained > MAX_DRAIN_BYTES) {
                ctx.close();
            }
        } finally {
            io.netty.util.ReferenceCountUtil.release(msg);
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

    /**
     * Splits a request target into ferry's API or an S3 bucket and key, decoded and checked. With
     * {@code hostBucket} (virtual-hosted style: the Host named the bucket) the whole path is the key.
     */
    static Route route(String uri, String hostBucket) throws S3Error {
        String target = uri;
        if (target.startsWith("http://") || target.startsWith("https://")) {
            int slash = target.indexOf('/', target.indexOf("//") + 2);
            target = slash < 0 ? "/" : target.substring(slash);
        }
        if (!target.startsWith("/")) {
            throw S3Error.invalidArgument("the request target must start with '/': " + Uris.abbreviate(uri));
        }
        int q = target.indexOf('?');
        String rawPath = q < 0 ? target : target.substring(0, q);
        String rawQuery = q < 0 ? null : target.substring(q + 1);
        Map<String, List<String>> query = Uris.query(rawQuery);
        boolean api = hostBucket == null && (rawPath.equals("/_ferry") || rawPath.startsWith("/_ferry/"));
        if (!api) {
            // S3 takes each parameter once: with two, which one is meant (?versionId=null&versionId=abc)?
            for (Map.Entry<String, List<String>> p : query.entrySet()) {
                if (p.getValue().size() > 1) {
                    throw S3Error.invalidArgument("the query gives " + Uris.abbreviate(p.getKey()) + " " + p.getValue().size()
                            + " times; each parameter may be given once");
                }
            }
        }
        if (hostBucket != null) {
            String key = rawPath.length() <= 1 ? null : Keys.check(Uris.decode(rawPath.substring(1)));
            return new Route(false, rawPath, rawQuery, query, hostBucket, key);
        }
        if (api) {
            return new Route(true, rawPath, rawQuery, query, null, null);
        }
        String path = rawPath.substring(1);
        if (path.isEmpty()) {
            return new Route(false, rawPath, rawQuery, query, null, null);
        }
        int slash = path.indexOf('/');
        String bucket = Keys.bucket(Uris.decode(slash < 0 ? path : path.substring(0, slash)));
        String key = slash < 0 || slash == path.length() - 1 ? null : Keys.check(Uris.decode(path.substring(slash + 1)));
        return new Route(false, rawPath, rawQuery, query, bucket, key);
    }
}
