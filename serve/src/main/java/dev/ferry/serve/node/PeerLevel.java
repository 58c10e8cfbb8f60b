package dev.ferry.serve.node;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.serve.protocol.FerryHeaders;
import dev.ferry.serve.protocol.Uris;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.time.Clock;
import dev.ferry.writeback.WriteBackStore;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code peer} durability level: a write acknowledged as on two disks, this node's and a group member's, before
 * the store has it.
 *
 * <ul>
 *   <li>As the writer's node: after write-back journaled a write, {@link #copy} sends its bytes to the next member
 *       of the group (in the group's order, past this node; the one after it when that one refuses), which fsyncs
 *       them before it answers. Once the write is durable in the store, the member is told to let its copy go.
 *   <li>As the peer: {@link #keep} holds another member's write in write-back's folder ({@code standby/}) until
 *       {@link #release}. Every second {@link #watch} asks each member it holds copies for who it is
 *       ({@code GET /_ferry/v1/journal}); a member that has not answered with the same journal for {@code grace}
 *       (gone, or back with another disk) has its copies adopted: they become this node's own pending writes, in the
 *       order they were written, and are uploaded from here.
 * </ul>
 *
 * Copies travel as S3 requests to the member's S3 port: {@code PUT /bucket/key} and {@code DELETE /bucket/key} with
 * the {@code x-ferry-copy-*} headers, unsigned (between daemons that check signatures this level is not available
 * yet). Thread-safe.
 */
public final class PeerLevel {
    private static final Logger LOG = LoggerFactory.getLogger(PeerLevel.class);
    /** The longest a copy may take to send: a member that stops reading is given up, not waited for. */
    private static final Duration SEND_LIMIT = Duration.ofMinutes(10);
    /** How often copies whose writer is alive are checked against the store, for releases that never came. */
    private static final Duration SWEEP_EVERY = Duration.ofMinutes(1);

    private static final ObjectMapper JSON = new ObjectMapper();

    private final WriteBackStore writeBack;
    private final RegionalGroup group;
    private final Clock clock;
    private final Duration grace;
    private final Executor workers;
    private final HttpClient http;
    /** This node's writes a member holds a copy of: sequence to (member, key). */
    private final Map<Long, Sent> sent = new ConcurrentHashMap<>();
    /** When each member this node holds copies for last answered with the journal they came from. */
    private final Map<String, Instant> lastSeen = new ConcurrentHashMap<>();
    /** When the copies kept for each member were last checked against the store. */
    private final Map<String, Instant> lastSwept = new ConcurrentHashMap<>();
    private final AtomicBoolean watching = new AtomicBoolean();

    private record Sent(String member, ObjectKey key) {
    }

    /**
     * The level over {@code writeBack} (null: not a write-back daemon, no level) in {@code group} (null: no group,
     * no peer to copy to); a member silent for {@code grace} has its copies adopted. Releases run on {@code workers}.
     */
    public PeerLevel(WriteBackStore writeBack, RegionalGroup group, Clock clock, Duration grace, Executor workers) {
        this.writeBack = writeBack;
        this.group = group;
        this.clock = clock;
        this.grace = grace;
        this.workers = workers;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).executor(workers).build();
        if (writeBack != null) {
            writeBack.onDurable(s -> {
                // this write, and the earlier writes of its key that it replaced (never durable themselves, perhaps
                // copied to another member): each member lets its copies of the key up to this one go
                List<Sent> done = new ArrayList<>();
                sent.entrySet().removeIf(e -> {
                    boolean gone = e.getKey() <= s.sequence() && e.getValue().key().equals(s.key());
                    if (gone && done.stream().noneMatch(d -> d.member().equals(e.getValue().member()))) {
                        done.add(e.getValue());
                    }
                    return gone;
                });
                for (Sent copy : done) {
                    workers.execute(() -> releaseAt(copy, s.sequence()));
                }
            });
        }
    }

    /** Holds write-back's uploads of {@code key} while a write of it is copied to a peer (a no-op without write-back). */
    public void holdUploads(ObjectKey key) {
        if (writeBack != null) {
            writeBack.holdUploads(key);
        }
    }

    /** Ends a {@link #holdUploads}. */
    public void resumeUploads(ObjectKey key) {
        if (writeBack != null) {
            writeBack.resumeUploads(key);
        }
    }

    /**
     * Copies this node's pending write {@code sequence} to a member: the member that holds it fsync'd, or null with
     * why in {@code why} when none could (no group, no other member, each refused or unreachable). The write may
     * meanwhile have become durable: then nothing is copied and the answer is "durable".
     */
    public String copy(long sequence, List<String> why) {
        String self = group == null ? null : group.self();
        if (writeBack == null || self == null) {
            why.add(writeBack == null ? "not a write-back daemon" : "this daemon is in no group");
            return null;
        }
        List<String> members = group.members();
        int at = members.indexOf(self);
        for (int i = 1; i < members.size(); i++) {
            String member = members.get((Math.max(at, 0) + i) % members.size());
            if (member.equals(self)) {
                continue;
            }
            WriteBackStore.LocalCopy local = writeBack.localCopy(sequence);
            if (local == null) {
                return "durable";
            }
            try {
                send(member, local);
                sent.put(sequence, new Sent(member, local.key()));
                if (writeBack.localCopy(sequence) == null && sent.remove(sequence) != null) {
                    releaseAt(new Sent(member, local.key()), sequence); // durable while it was copied
                }
                return member;
            } catch (IOException | RuntimeException e) {
                why.add(member + ": " + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()));
            }
        }
        if (why.isEmpty()) {
            why.add("the group has no other member");
        }
        return null;
    }

    /**
     * Sends {@code local} to {@code member} as one PUT whose body goes from the file to the socket by the kernel
     * ({@code sendfile}): a copy costs the peer's disk, not this node's CPU. Throws unless it answered 200.
     */
    private void send(String member, WriteBackStore.LocalCopy local) throws IOException {
        URI uri = objectUri(member, local.key());
        StringBuilder head = new StringBuilder("PUT ").append(uri.getRawPath()).append(" HTTP/1.1\r\n")
                .append("Host: ").append(uri.getHost()).append(':').append(uri.getPort()).append("\r\n")
                .append("Content-Length: ").append(local.size()).append("\r\n")
                .append(FerryHeaders.COPY_OF).append(": ").append(writeBack.journalId()).append("\r\n")
                .append(FerryHeaders.COPY_FROM).append(": ").append(group.self()).append("\r\n")
                .append(FerryHeaders.COPY_SEQUENCE).append(": ").append(local.sequence()).append("\r\n")
                .append(FerryHeaders.COPY_CRC32C).append(": ").append(local.crc32c()).append("\r\n")
                .append(FerryHeaders.COPY_WRITTEN).append(": ").append(local.written().toEpochMilli()).append("\r\n");
        if (local.etag() != null) {
            head.append(FerryHeaders.COPY_ETAG).append(": ").append(local.etag()).append("\r\n");
        }
        if (local.partSizes() != null) {
            head.append(FerryHeaders.COPY_PARTS).append(": ").append(String.join(",", local.partSizes().stream().map(String::valueOf).toList()))
                    .append("\r\n");
        }
        if (local.after() != null) {
            head.append(FerryHeaders.AFTER).append(": ").append(local.after()).append("\r\n");
        }
        local.attributes().headers().forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
        head.append("Connection: close\r\n\r\n");
        if (uri.getPort() < 0) {
            throw new IOException("the member's URL names no port: " + member);
        }
        try (SocketChannel socket = SocketChannel.open();
                FileChannel file = FileChannel.open(local.data(), StandardOpenOption.READ)) {
            // a member that stops reading would hold this write (and its key's lock) for ever: closed past the limit
            java.util.concurrent.CompletableFuture.delayedExecutor(SEND_LIMIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
                    .execute(() -> {
                        try {
                            socket.close();
                        } catch (IOException ignored) {
                            // closing is all that is asked
                        }
                    });
            socket.socket().connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 2000);
            socket.socket().setSoTimeout((int) SEND_LIMIT.toMillis());
            ByteBuffer h = ByteBuffer.wrap(head.toString().getBytes(StandardCharsets.UTF_8));
            while (h.hasRemaining()) {
                socket.write(h);
            }
            for (long at = 0; at < local.size(); ) {
                at += file.transferTo(at, local.size() - at, socket);
            }
            String status = answer(socket.socket().getInputStream());
            if (!status.startsWith("200")) {
                throw new IOException("answered " + status);
            }
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException("the write's local copy went (durable meanwhile)", e);
        }
    }

    /** The status line's code and reason, then the body's first bytes when it is not 200. */
    private static String answer(InputStream in) throws IOException {
        byte[] reply = in.readNBytes(4096);
        String text = new String(reply, StandardCharsets.UTF_8);
        int space = text.indexOf(' ');
        int lineEnd = text.indexOf("\r\n");
        if (!text.startsWith("HTTP/") || space < 0 || lineEnd < space) {
            throw new IOException("no HTTP answer");
        }
        String status = text.substring(space + 1, lineEnd);
        int body = text.indexOf("\r\n\r\n");
        return status.startsWith("200") || body < 0 ? status : status + " " + Uris.abbreviate(text.substring(body + 4));
    }

    private static URI objectUri(String member, ObjectKey key) {
        return URI.create(member.replaceAll("/+$", "") + "/" + Uris.encode(key.bucket(), true) + "/" + Uris.encode(key.key(), false));
    }

    private void releaseAt(Sent copy, long sequence) {
        HttpRequest r = HttpRequest.newBuilder(objectUri(copy.member(), copy.key())).timeout(Duration.ofSeconds(30))
                .header(FerryHeaders.COPY_OF, writeBack.journalId()).header(FerryHeaders.COPY_SEQUENCE, Long.toString(sequence)).DELETE().build();
        try {
            HttpResponse<String> answer = http.send(r, HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() / 100 != 2) {
                LOG.info("{} kept its copy of {} (answered {}); it lets it go when it finds the key durable", copy.member(), copy.key(),
                        answer.statusCode());
            }
        } catch (IOException e) {
            LOG.info("cannot tell {} that {} is durable ({}); its copy stays until it adopts or is told", copy.member(), copy.key(),
                    e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Keeps another member's write, as its peer: the bytes fsync'd here before this returns. */
    public void keep(String originId, String originUrl, long sequence, ObjectKey key, int crc32c, String etag, List<Long> partSizes,
            ObjectAttributes attributes, String after, Instant written, PutBody body) throws IOException {
        if (writeBack == null) {
            throw new dev.ferry.store.StoreException(dev.ferry.store.StoreException.Kind.FATAL, 501, "NotImplemented",
                    "this daemon keeps no copies for its peers: it runs without --write-back", null);
        }
        writeBack.keepCopy(originId, originUrl, new WriteBackStore.LocalCopy(sequence, key, null, body.length(), crc32c, etag, partSizes,
                attributes, after, written), body);
        lastSeen.putIfAbsent(originId, clock.now());
    }

    /** Lets go of {@code originId}'s copies of {@code key} up to {@code sequence}: durable in the store. */
    public void release(String originId, ObjectKey key, long sequence) throws IOException {
        if (writeBack != null) {
            writeBack.releaseCopies(originId, key, sequence);
        }
    }

    /**
     * Once a second: each member this node holds copies for is asked who it is; one that has not answered with the
     * journal the copies came from for {@code grace} has them adopted. Runs one at a time; the asking is on
     * {@code workers}.
     */
    public void watch() {
        if (writeBack == null || !watching.compareAndSet(false, true)) {
            return;
        }
        workers.execute(() -> {
            try {
                for (Map.Entry<String, String> origin : writeBack.copyOrigins().entrySet()) {
                    check(origin.getKey(), origin.getValue());
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot look over the copies kept for peers: {}", e.getMessage());
            } finally {
                watching.set(false);
            }
        });
    }

    private void check(String originId, String originUrl) throws IOException {
        Instant now = clock.now();
        Instant seen = lastSeen.computeIfAbsent(originId, id -> now);
        String answered = journalOf(originUrl);
        if (originId.equals(answered)) {
            lastSeen.put(originId, now);
            Instant swept = lastSwept.putIfAbsent(originId, now);
            if (swept != null && Duration.between(swept, now).compareTo(SWEEP_EVERY) >= 0) {
                lastSwept.put(originId, now);
                int gone = writeBack.sweepCopies(originId); // durable, though no release came
                if (gone > 0) {
                    LOG.info("let go of {} copies kept for {}: the store holds their writes", gone, originUrl);
                }
            }
            return;
        }
        if (Duration.between(seen, now).compareTo(grace) < 0) {
            return;
        }
        String why = answered == null ? "has not answered for " + Duration.between(seen, now).toSeconds() + " s"
                : "answers with another journal (a new disk)";
        int adopted = writeBack.adoptCopies(originId);
        lastSeen.remove(originId);
        LOG.warn("{} {}: its {} writes kept here are now this node's, uploaded from here", originUrl, why, adopted);
    }

    /** The journal {@code member} answers with, or null when it does not answer. */
    private String journalOf(String member) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(member.replaceAll("/+$", "") + "/_ferry/v1/journal"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return null;
            }
            return JSON.readTree(r.body()).path("journal").asText(null);
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The member holding a copy of this node's pending write {@code sequence}, or null (none, or durable now). */
    public String holderOf(long sequence) {
        Sent copy = sent.get(sequence);
        return copy == null ? null : copy.member();
    }

    /** How many of this node's pending writes a member holds a copy of. */
    public int onPeers() {
        return sent.size();
    }

    /** Closes the HTTP client that releases copies and asks members who they are. */
    public void close() {
        http.close();
    }

    /** The copies this node keeps for its peers, for the status: count and bytes. */
    public long[] held() {
        try {
            return writeBack == null ? new long[2] : writeBack.copiesHeld();
        } catch (IOException e) {
            return new long[2];
        }
    }

    /** Parses a copy's part sizes header ({@code 5242880,5242880,17}), null for none. */
    public static List<Long> parts(String header) {
        if (header == null || header.isBlank()) {
            return null;
        }
        List<Long> out = new ArrayList<>();
        for (String p : header.split(",")) {
            out.add(Long.parseLong(p.trim()));
        }
        return out;
    }
}
