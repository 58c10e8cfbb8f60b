package dev.ferry.serve.node;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * A TCP relay in front of a real server that can be told to stall: from then on it accepts connections and
 * forwards nothing, in either direction, as a hung origin does. Without a server it stalls from the start:
 * a port that accepts and never answers.
 */
final class StallingRelay implements AutoCloseable {
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile boolean stalled;
    /** Bytes of each answer passed on before it stops, as a store whose body stalls mid-way; -1: all of them. */
    private volatile long answerBytesBeforeStall = -1;

    StallingRelay(InetSocketAddress target) throws IOException {
        this.server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        this.target = target;
        this.stalled = target == null;
        Thread.ofPlatform().daemon().name("stalling-relay").start(this::accept);
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    void stall() {
        stalled = true;
    }

    /** From now on, each connection's answer stops after {@code bytes} bytes (its head included) and the connection stays open. */
    void stallAnswersAfter(long bytes) {
        answerBytesBeforeStall = bytes;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                sockets.add(client);
                if (stalled) {
                    continue; // accepted, never answered
                }
                Socket upstream = new Socket(target.getAddress(), target.getPort());
                sockets.add(upstream);
                pump(client, upstream, false);
                pump(upstream, client, true);
            } catch (IOException e) {
                // closed, or the server refused: the next accept tells
            }
        }
    }

    private void pump(Socket from, Socket to, boolean answer) {
        long limit = answer ? answerBytesBeforeStall : -1;
        Thread.ofVirtual().start(() -> {
            byte[] buffer = new byte[64 * 1024];
            long passed = 0;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    if (stalled) {
                        closed.await(); // hold the bytes: nothing crosses any more
                        return;
                    }
                    int pass = limit < 0 ? n : (int) Math.min(n, limit - passed);
                    out.write(buffer, 0, pass);
                    out.flush();
                    passed += pass;
                    if (pass < n) {
                        closed.await(); // the rest of the answer never comes
                        return;
                    }
                }
            } catch (IOException | InterruptedException e) {
                // a side closed
            }
        });
    }

    @Override
    public void close() throws IOException {
        closed.countDown();
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
