package dev.ferry.serve.front;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Each connection's pipeline: an idle timeout, the header timeout (its byte side before the codec, its request
 * side after), the HTTP codec within the header limits, {@link PipelinedRequests} (one exchange at a time), and
 * the {@link S3Handler}.
 */
final class S3ServerInitializer extends ChannelInitializer<SocketChannel> {
    private final ServeContext context;
    private final Duration headerTimeout;

    S3ServerInitializer(ServeContext context, Duration headerTimeout) {
        this.context = context;
        this.headerTimeout = headerTimeout;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        HeaderTimeout timeout = new HeaderTimeout(headerTimeout);
        ch.pipeline().addLast(new IdleStateHandler(0, 0, 120, TimeUnit.SECONDS));
        ch.pipeline().addLast(timeout.bytes());
        ch.pipeline().addLast(new HttpServerCodec(new HttpDecoderConfig()
                .setMaxInitialLineLength(context.limits().maxHeaderBytes()).setMaxHeaderSize(context.limits().maxHeaderBytes())
                .setMaxChunkSize(256 * 1024)));
        ch.pipeline().addLast(timeout.requests());
        PipelinedRequests pipelining = new PipelinedRequests();
        ch.pipeline().addLast(pipelining);
        ch.pipeline().addLast(new S3Handler(context, pipelining));
    }
}
