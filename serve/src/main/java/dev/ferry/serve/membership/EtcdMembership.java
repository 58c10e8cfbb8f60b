package dev.ferry.serve.membership;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The members are the daemons registered under a key prefix in etcd, as Alluxio registers its workers: each
 * daemon keeps the key {@code PREFIX<its URL>} (value: the URL) on a lease of five {@code refresh}es (at
 * least 5 s: a busy machine must not lose its place) that it renews every {@code refresh}, and watches the prefix. A daemon that stops renewing (killed, cut off)
 * leaves when its lease expires; one that closes revokes its lease and leaves at once. The members are the
 * sorted URLs.
 *
 * <p>Design note: this speaks etcd v3's JSON gateway ({@code /v3/kv/range}, {@code /v3/kv/put}, {@code
 * /v3/lease/grant|keepalive|revoke}, {@code /v3/watch}, keys and values in base64; served by etcd 3.4 and
 * later) through the JDK's HTTP client, not jetcd: jetcd 0.8 resolves from Maven Central, but brings gRPC,
 * Vert.x 4, protobuf and Guava (about 15 MB), and Vert.x 4 and grpc-netty are built on Netty 4.1, while the
 * daemon serves on Netty 4.2, which the build's Netty BOM would force on them, untested. The gateway is the
 * same API, documented by etcd, and costs no dependency. The watch is a trigger: on each event, and at each
 * renewal as a safety net, the prefix is read again whole. Thread-safe.
 */
final class EtcdMembership implements Membership {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdMembership.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final GroupSpec.Etcd spec;
    private final Duration refresh;
    private final long ttlSeconds;
    private final HttpClient http;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "ferry-group-etcd");
        t.setDaemon(true);
        return t;
    });
    private final Object lock = new Object();
    private volatile boolean closed;
    private volatile String lease;
    private URI self;
    private Consumer<List<URI>> listener;
    private List<URI> last;
    private Thread watcher;
    private boolean failing;

    EtcdMembership(GroupSpec.Etcd spec, Duration refresh) {
        this.spec = spec;
        this.refresh = refresh;
        this.ttlSeconds = Math.max(5, (refresh.toMillis() * 5 + 999) / 1000);
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    }

    @Override
    public String source() {
        return spec.text();
    }

    @Override
    public void start(URI self, Consumer<List<URI>> listener) {
        synchronized (lock) {
            this.self = self;
            this.listener = listener;
        }
        tick();
        synchronized (lock) {
            if (last == null) {
                last = List.of();
                listener.accept(last);
            }
        }
        watcher = Thread.ofPlatform().daemon().name("ferry-group-etcd-watch").start(this::watchLoop);
        long every = Math.max(100, refresh.toMillis());
        timer.scheduleWithFixedDelay(this::tick, every, every, TimeUnit.MILLISECONDS);
    }

    /** Renews (or takes) this daemon's lease and key, then reads the members. */
    private void tick() {
        try {
            if (self != null) {
                keepRegistered();
            }
            read();
            if (failing) {
                LOG.info("etcd at {} answers again", spec.endpoint());
                failing = false;
            }
        } catch (IOException | RuntimeException e) {
            if (!failing && !closed) {
                LOG.warn("etcd at {} cannot be reached (keeping the last members): {}", spec.endpoint(), e.getMessage());
                failing = true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void keepRegistered() throws IOException, InterruptedException {
        String id = lease;
        if (id != null) {
            JsonNode r = call("/v3/lease/keepalive", JSON.createObjectNode().put("ID", id));
            long ttl = r.path("result").path("TTL").asLong(0);
            if (ttl > 0) {
                return;
            }
            LOG.warn("the etcd lease of {} expired; registering again", self);
        }
        JsonNode grant = call("/v3/lease/grant", JSON.createObjectNode().put("TTL", ttlSeconds));
        id = grant.path("ID").asText(null);
        if (id == null) {
            throw new IOException("etcd granted no lease: " + grant);
        }
        call("/v3/kv/put", JSON.createObjectNode().put("key", b64(spec.prefix() + self)).put("value", b64(self.toString())).put("lease", id));
        lease = id;
    }

    /** Reads the prefix whole and reports the members when they changed. */
    private void read() throws IOException, InterruptedException {
        JsonNode r = call("/v3/kv/range", JSON.createObjectNode().put("key", b64(spec.prefix())).put("range_end", b64(rangeEnd(spec.prefix()))));
        List<URI> members = new ArrayList<>();
        for (JsonNode kv : r.path("kvs")) {
            String v = new String(Base64.getDecoder().decode(kv.path("value").asText("")), StandardCharsets.UTF_8);
            try {
                members.add(GroupSpec.url(v));
            } catch (IllegalArgumentException e) {
                LOG.warn("etcd key under {} holds '{}', not a daemon URL: ignored", spec.prefix(), v);
            }
        }
        List<URI> sorted = Urls.sorted(members);
        synchronized (lock) {
            if (!closed && !sorted.equals(last)) {
                LOG.info("group {}: {}", spec.text(), sorted);
                last = sorted;
                listener.accept(sorted);
            }
        }
    }

    /** Watches the prefix; each event reads it again. Reconnects after a pause when the stream ends. */
    private void watchLoop() {
        while (!closed) {
            try {
                ObjectNode create = JSON.createObjectNode();
                create.putObject("create_request").put("key", b64(spec.prefix())).put("range_end", b64(rangeEnd(spec.prefix())));
                HttpRequest req = HttpRequest.newBuilder(spec.endpoint().resolve("/v3/watch"))
                        .POST(HttpRequest.BodyPublishers.ofString(create.toString())).build();
                HttpResponse<InputStream> resp = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
                try (BufferedReader in = new BufferedReader(new InputStreamReader(resp.body(), StandardCharsets.UTF_8))) {
                    String line;
                    while (!closed && (line = in.readLine()) != null) {
                        JsonNode event = JSON.readTree(line);
                        if (event.path("result").has("events")) {
                            read();
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                if (!closed) {
                    LOG.debug("etcd watch ended: {}", e.toString());
                }
            } catch (InterruptedException e) {
                return;
            }
            if (!closed) {
                try {
                    Thread.sleep(Math.max(100, refresh.toMillis()));
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private JsonNode call(String path, ObjectNode body) throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(spec.endpoint().resolve(path)).timeout(Duration.ofSeconds(2))
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("etcd " + path + " answered " + r.statusCode() + ": " + r.body());
        }
        // a stream endpoint (keepalive) answers one JSON object per line
        String first = r.body().lines().findFirst().orElse("{}");
        return JSON.readTree(first);
    }

    private static String b64(String s) {
        return b64(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }

    /** The end of the key range of a prefix: the prefix with its last byte plus one (etcd's prefix range). */
    static byte[] rangeEnd(String prefix) {
        byte[] b = prefix.getBytes(StandardCharsets.UTF_8);
        for (int i = b.length - 1; i >= 0; i--) {
            if (b[i] != (byte) 0xff) {
                b[i]++;
                return java.util.Arrays.copyOf(b, i + 1);
            }
        }
        return new byte[] {0};
    }

    @Override
    public void close() {
        closed = true;
        timer.shutdownNow();
        if (watcher != null) {
            watcher.interrupt();
        }
        String id = lease;
        if (id != null) {
            try {
                call("/v3/lease/revoke", JSON.createObjectNode().put("ID", id)); // the key goes at once: the others see this daemon leave
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot withdraw from etcd (the lease expires in {} s): {}", ttlSeconds, e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        http.shutdownNow();
    }
}
