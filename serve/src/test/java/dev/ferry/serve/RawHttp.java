package dev.ferry.serve;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** HTTP/1.1 over a raw socket, for requests no client library would send (broken framing, bodies cut short). */
public final class RawHttp {
    private RawHttp() {
    }

    /** An answer's status line and headers (CRLF-separated) and body; status 0 when the daemon answered nothing. */
    public record Answer(int status, String head, String body) {
        public String header(String name) {
            for (String line : head.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                    return line.substring(colon + 1).trim();
                }
            }
            return null;
        }
    }

    /**
     * Sends {@code raw} on a fresh connection and reads until the daemon closes it (send {@code Connection:
     * close}); with {@code halfClose} the client shuts its side first, as a client that died mid-request.
     */
    public static Answer exchange(int port, String raw, boolean halfClose) throws IOException {
        return exchange(port, raw, halfClose, 10_000);
    }

    /** As {@link #exchange(int, String, boolean)}, waiting up to {@code timeoutMillis} between bytes of the answer. */
    public static Answer exchange(int port, String raw, boolean halfClose, int timeoutMillis) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(timeoutMillis);
            s.getOutputStream().write(raw.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            if (halfClose) {
                s.shutdownOutput();
            }
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            InputStream in = s.getInputStream();
            try {
                in.transferTo(got);
            } catch (java.net.SocketException e) {
                // a reset after the answer: what was read stands
            }
            String text = got.toString(StandardCharsets.UTF_8);
            int end = text.indexOf("\r\n\r\n");
            if (end < 0) {
                return new Answer(0, "", text);
            }
            String head = text.substring(0, end);
            return new Answer(Integer.parseInt(head.split(" ")[1]), head, text.substring(end + 4));
        }
    }

    public static Answer exchange(int port, String raw) throws IOException {
        return exchange(port, raw, false);
    }
}
