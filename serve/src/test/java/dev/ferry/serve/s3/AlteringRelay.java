package dev.ferry.serve.s3;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay in front of a real S3 server that changes what clients send it: every {@code from} in the bytes
 * towards the server becomes {@code to} (as long), so a PUT body holding {@code from} is stored holding
 * {@code to}, and the server answers with the ETag of what it stored. What comes back passes unchanged. A
 * store that keeps something else than it was sent, for real: no checksum in the request catches it.
 */
final class AlteringRelay implements AutoCloseable {
    private final ServerSocket server;
    private final InetSocketAddress target;
    private final byte[] from;
    private final byte[] to;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    AlteringRelay(URI target, String from, String to) throws IOException {
        this.from = from.getBytes(StandardCharsets.ISO_8859_1);
        this.to = to.getBytes(StandardCharsets.ISO_8859_1);
        if (this.from.length != this.to.length || this.from.length == 0) {
            throw new IllegalArgumentException("from and to must be as long, and not empty");
        }
        this.target = new InetSocketAddress(target.getHost(), target.getPort());
        this.server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().daemon().name("altering-relay").start(this::accept);
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(target.getAddress(), target.getPort());
                sockets.add(client);
                sockets.add(upstream);
                Thread.ofVirtual().start(() -> pump(client, upstream, true));
                Thread.ofVirtual().start(() -> pump(upstream, client, false));
            } catch (IOException e) {
                // closed, or the server refused: the next accept tells
            }
        }
    }

    /**
     * Forwards, replacing {@code from} when {@code alter}; bytes at the end that may begin a {@code from} wait
     * for what follows (give {@code from} a first byte that ends nothing sent, and nothing waits for ever).
     */
    private void pump(Socket source, Socket sink, boolean alter) {
        try (InputStream in = source.getInputStream(); OutputStream out = sink.getOutputStream()) {
            byte[] held = new byte[0];
            byte[] buffer = new byte[64 * 1024];
            for (int n; (n = in.read(buffer)) >= 0; ) {
                if (!alter) {
                    out.write(buffer, 0, n);
                    out.flush();
                    continue;
                }
                byte[] all = Arrays.copyOf(held, held.length + n);
                System.arraycopy(buffer, 0, all, held.length, n);
                for (int i = 0; i + from.length <= all.length; i++) {
                    if (Arrays.equals(all, i, i + from.length, from, 0, from.length)) {
                        System.arraycopy(to, 0, all, i, to.length);
                        i += from.length - 1;
                    }
                }
                int keep = partialMatch(all);
                out.write(all, 0, all.length - keep);
                out.flush();
                held = Arrays.copyOfRange(all, all.length - keep, all.length);
            }
            out.write(held);
        } catch (IOException e) {
            // a side closed
        } finally {
            try {
                sink.shutdownOutput();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }

    /** The length of the longest end of {@code bytes} that is a proper beginning of {@code from}. */
    private int partialMatch(byte[] bytes) {
        for (int k = Math.min(from.length - 1, bytes.length); k > 0; k--) {
            if (Arrays.equals(bytes, bytes.length - k, bytes.length, from, 0, k)) {
                return k;
            }
        }
        return 0;
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
