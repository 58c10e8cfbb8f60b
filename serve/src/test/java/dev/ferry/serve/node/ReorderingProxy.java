package dev.ferry.serve.node;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP/1.1 proxy in front of a real S3 server, over real sockets, that does to requests what an unlucky network
 * (or a buffering load balancer) does: it can hold a request it has read whole and deliver it later, on a connection
 * of its own, after its sender gave up on it; deliver it twice; or pass it on at once. Which, is the test's
 * {@link Plan} for each request (method, path, and how many times that method and path were seen before).
 * Every connection is one request ({@code Connection: close} both ways); {@code Expect: 100-continue} is answered
 * here.
 */
final class ReorderingProxy implements AutoCloseable {
    /**
     * What to do with one request: answer it here with {@code refuseStatus} (an S3 error; 0: do not), pass it on
     * ({@code holdMillis < 0}), or hold it that long, then deliver it {@code copies} times.
     */
    record Plan(long holdMillis, int copies, int refuseStatus) {
        static final Plan PASS = new Plan(-1, 1, 0);

        static Plan hold(long millis) {
            return new Plan(millis, 1, 0);
        }

        static Plan holdAndDuplicate(long millis) {
            return new Plan(millis, 2, 0);
        }

        /** Answered here, as a store that cannot keep the key answers: {@code 500 InternalError}, "File name too long". */
        static Plan refuse() {
            return new Plan(-1, 0, 500);
        }
    }

    /** Decides a request's plan from its method, path (with query) and the number of earlier requests of both. */
    interface Planner {
        Plan plan(String method, String path, int seenBefore);
    }

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final Planner planner;
    private final ConcurrentHashMap<String, AtomicInteger> seen = new ConcurrentHashMap<>();
    private final AtomicInteger held = new AtomicInteger();
    private final AtomicInteger delivered = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    ReorderingProxy(InetSocketAddress target, Planner planner) throws IOException {
        this.server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
        this.target = target;
        this.planner = planner;
        Thread.ofPlatform().daemon().name("reordering-proxy").start(this::accept);
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    /** Requests held now, not yet delivered (every copy). */
    int holding() {
        return held.get();
    }

    /** Requests answered here with a refusal. */
    int refused() {
        return refused.get();
    }

    /** Held requests delivered so far (each copy counts). */
    int deliveredLate() {
        return delivered.get();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                sockets.add(client);
                Thread.ofVirtual().start(() -> serve(client));
            } catch (IOException e) {
                // closed
            }
        }
    }

    /** One request: read whole, then passed through, or held and delivered later on connections of the proxy's own. */
    private void serve(Socket client) {
        try (client) {
            InputStream in = client.getInputStream();
            OutputStream out = client.getOutputStream();
            Request request = Request.read(in, out);
            if (request == null) {
                return;
            }
            int before = seen.computeIfAbsent(request.method + " " + request.path, k -> new AtomicInteger()).getAndIncrement();
            Plan plan = planner.plan(request.method, request.path, before);
            if (plan.refuseStatus() != 0) {
                refused.incrementAndGet();
                byte[] body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code><Message>File name too long"
                        + "</Message><Resource>" + request.path + "</Resource></Error>").getBytes(StandardCharsets.UTF_8);
                out.write(("HTTP/1.1 " + plan.refuseStatus() + " Refused\r\nContent-Type: application/xml\r\nContent-Length: " + body.length
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                out.write(body);
                out.flush();
                return;
            }
            if (plan.holdMillis() < 0) {
                try (Socket upstream = new Socket(target.getAddress(), target.getPort())) {
                    sockets.add(upstream);
                    upstream.getOutputStream().write(request.bytes);
                    upstream.getOutputStream().flush();
                    relayResponse(upstream.getInputStream(), out);
                }
                return;
            }
            held.addAndGet(plan.copies());
            Thread.ofVirtual().start(() -> deliverLater(request, plan));
            // the sender hears nothing: it gives up on the request, and the proxy keeps it
            while (!closed && in.read() >= 0) {
                // wait for the sender to close its side
            }
        } catch (IOException e) {
            // a side closed
        }
    }

    private void deliverLater(Request request, Plan plan) {
        try {
            Thread.sleep(plan.holdMillis());
            for (int i = 0; i < plan.copies() && !closed; i++) {
                try (Socket upstream = new Socket(target.getAddress(), target.getPort())) {
                    upstream.getOutputStream().write(request.bytes);
                    upstream.getOutputStream().flush();
                    upstream.getInputStream().readAllBytes(); // the answer goes nowhere: its sender is long gone
                } catch (IOException e) {
                    // the server refused it: nothing landed
                }
                delivered.incrementAndGet();
                held.decrementAndGet();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Copies the response head with {@code Connection: close}, then its body until the server closes. */
    private static void relayResponse(InputStream in, OutputStream out) throws IOException {
        String head = readHead(in);
        StringBuilder rewritten = new StringBuilder();
        for (String line : head.split("\r\n")) {
            if (!line.toLowerCase(Locale.ROOT).startsWith("connection:") && !line.isEmpty()) {
                rewritten.append(line).append("\r\n");
            }
        }
        rewritten.append("Connection: close\r\n\r\n");
        out.write(rewritten.toString().getBytes(StandardCharsets.ISO_8859_1));
        in.transferTo(out);
        out.flush();
    }

    /** The bytes up to and including the blank line after the headers; null at a clean end of stream before any byte. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                if (head.size() == 0) {
                    return null;
                }
                throw new EOFException("the head ended early");
            }
            head.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3)) ? matched + 1
                    : b == '\r' ? 1 : 0;
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    /** A request read whole: its method, path, and the bytes to send upstream (Connection: close, no Expect). */
    private record Request(String method, String path, byte[] bytes) {
        static Request read(InputStream in, OutputStream out) throws IOException {
            String head = readHead(in);
            if (head == null) {
                return null;
            }
            String[] lines = head.split("\r\n");
            String[] requestLine = lines[0].split(" ");
            StringBuilder forwarded = new StringBuilder(lines[0]).append("\r\n");
            long length = 0;
            boolean chunked = false;
            boolean expectContinue = false;
            for (int i = 1; i < lines.length; i++) {
                String line = lines[i];
                String lower = line.toLowerCase(Locale.ROOT);
                if (line.isEmpty() || lower.startsWith("connection:")) {
                    continue;
                }
                if (lower.startsWith("expect:")) {
                    expectContinue = lower.contains("100-continue");
                    continue;
                }
                if (lower.startsWith("content-length:")) {
                    length = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                }
                if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                    chunked = true;
                }
                forwarded.append(line).append("\r\n");
            }
            forwarded.append("Connection: close\r\n\r\n");
            if (expectContinue) {
                out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
            }
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            bytes.write(forwarded.toString().getBytes(StandardCharsets.ISO_8859_1));
            if (chunked) {
                copyChunked(in, bytes);
            } else {
                byte[] body = in.readNBytes((int) length);
                if (body.length != length) {
                    throw new EOFException("the body ended early");
                }
                bytes.write(body);
            }
            return new Request(requestLine[0], requestLine[1], bytes.toByteArray());
        }

        private static void copyChunked(InputStream in, ByteArrayOutputStream out) throws IOException {
            while (true) {
                String sizeLine = line(in);
                out.write((sizeLine + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
                int semicolon = sizeLine.indexOf(';');
                long size = Long.parseLong((semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
                if (size == 0) {
                    for (String trailer = line(in); ; trailer = line(in)) {
                        out.write((trailer + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
                        if (trailer.isEmpty()) {
                            return;
                        }
                    }
                }
                out.write(in.readNBytes((int) size));
                out.write((line(in) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            }
        }

        private static String line(InputStream in) throws IOException {
            List<Byte> bytes = new ArrayList<>();
            for (int b = in.read(); b != '\n'; b = in.read()) {
                if (b < 0) {
                    throw new EOFException("a chunk ended early");
                }
                if (b != '\r') {
                    bytes.add((byte) b);
                }
            }
            byte[] out = new byte[bytes.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = bytes.get(i);
            }
            return new String(out, StandardCharsets.ISO_8859_1);
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
