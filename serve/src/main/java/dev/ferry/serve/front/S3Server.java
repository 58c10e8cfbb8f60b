package dev.ferry.serve.front;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The daemon's Netty front: binds the listening socket, one boss thread and an I/O thread per core (at least
 * two), each connection set up by {@link S3ServerInitializer}. Arranged as Netty's {@code HttpStaticFileServer}
 * example: bootstrap, initializer and handler apart.
 */
public final class S3Server implements AutoCloseable {
    private final EventLoopGroup boss;
    private final EventLoopGroup io;
    private final Channel channel;

    private S3Server(EventLoopGroup boss, EventLoopGroup io, Channel channel) {
        this.boss = boss;
        this.io = io;
        this.channel = channel;
    }

    /** Listens on {@code bind:port} (0: a free port); it accepts connections when this returns. */
    public static S3Server start(String bind, int port, Duration headerTimeout, ServeContext context) throws IOException {
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup io = new MultiThreadIoEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()), NioIoHandler.newFactory());
        try {
            ServerBootstrap b = new ServerBootstrap().group(boss, io).channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(512 * 1024, 2 * 1024 * 1024))
                    .childHandler(new S3ServerInitializer(context, headerTimeout));
            return new S3Server(boss, io, b.bind(new InetSocketAddress(bind, port)).sync().channel());
        } catch (Exception ex) {
            shutdown(boss, io);
            throw new IOException("cannot listen on " + bind + ":" + port + ": " + ex.getMessage(), ex);
        }
    }

    public int port() {
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    /** Closes the listening socket, then the event loops (open connections are cut). */
    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        shutdown(boss, io);
    }

    private static void shutdown(EventLoopGroup boss, EventLoopGroup io) {
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        io.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
