package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.time.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;

/**
 * kill -9 of {@code ferry serve --write-back} at random points while a client PUTs small checkpoints and
 * uploads multipart ones (parts kept locally, the assembled object written back), many times: after each restart, the daemon's flush fence returns complete, and
 * every write the daemon acknowledged is in the object store byte for byte (that version, or a later one
 * the client was writing when the daemon died).
 */
class ServeWriteBackKillTest {
    static final int ITERATIONS = 4;
    static final int KEYS = 6;

    @TempDir
    Path dir;

    /** The bytes of version {@code v} of checkpoint {@code k}: small ones 64 KiB, every third one 11 MiB (multipart). */
    static byte[] content(int k, long v) {
        int size = k % 3 == 0 ? 11 << 20 : 64 << 10;
        byte[] b = new byte[size];
        new Random(k * 1_000_003L + v).nextBytes(b);
        ByteBuffer.wrap(b).putLong(v);
        return b;
    }

    @Test
    void killedWhileWriting_everyAcknowledgedWriteBecomesDurable() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store/ckpt"));
        Random random = new Random(17);
        Map<Integer, Long> acked = new ConcurrentHashMap<>();
        Map<Integer, Long> attempted = new ConcurrentHashMap<>();
        long[] version = {1};
        int acknowledgements = 0;
        for (int iteration = 0; iteration < ITERATIONS; iteration++) {
            int port = Servers.freePort();
            Process ferry = Servers.ferry(dir.resolve("serve-" + iteration + ".log"), "serve", "--write-back", "--store-root",
                    dir.resolve("store").toString(), "--cache-dir", dir.resolve("cache").toString(), "--port", Integer.toString(port));
            Servers.awaitPort(port, Duration.ofSeconds(90), ferry);
            URI endpoint = URI.create("http://127.0.0.1:" + port);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger ackedThisRound = new AtomicInteger();
            AtomicInteger answered = new AtomicInteger(); // requests the daemon answered: puts, and each step of a multipart upload
            AtomicReference<RuntimeException> writerEnd = new AtomicReference<>();
            try (S3Client s3 = S3Client.builder().endpointOverride(endpoint).forcePathStyle(true).region(Region.US_EAST_1)
                    .credentialsProvider(AnonymousCredentialsProvider.create()).build()) {
                Thread writer = Thread.ofPlatform().start(() -> {
                    while (!stop.get()) {
                        int k = random.nextInt(KEYS);
                        long v;
                        synchronized (version) {
                            v = version[0]++;
                        }
                        attempted.merge(k, v, Math::max);
                        try {
                            byte[] data = content(k, v);
                            if (data.length > 8 << 20) {
                                String id = s3.createMultipartUpload(b -> b.bucket("ckpt").key("k" + k)).uploadId();
                                answered.incrementAndGet();
                                List<CompletedPart> parts = new ArrayList<>();
                                for (int p = 0; p * (5 << 20) < data.length; p++) {
                                    int from = p * (5 << 20);
                                    int part = p + 1;
                                    byte[] slice = java.util.Arrays.copyOfRange(data, from, Math.min(data.length, from + (5 << 20)));
                                    String etag = s3.uploadPart(b -> b.bucket("ckpt").key("k" + k).uploadId(id).partNumber(part),
                                            RequestBody.fromBytes(slice)).eTag();
                                    parts.add(CompletedPart.builder().partNumber(part).eTag(etag).build());
                                    answered.incrementAndGet();
                                }
                                s3.completeMultipartUpload(b -> b.bucket("ckpt").key("k" + k).uploadId(id)
                                        .multipartUpload(m -> m.parts(parts)));
                            } else {
                                s3.putObject(b -> b.bucket("ckpt").key("k" + k), RequestBody.fromBytes(data));
                            }
                            answered.incrementAndGet();
                            acked.merge(k, v, Math::max);
                            ackedThisRound.incrementAndGet();
                        } catch (RuntimeException e) {
                            writerEnd.set(e);
                            return; // the daemon died under us: this write was not acknowledged
                        }
                    }
                });
                // kill after the Nth acknowledgement of this round and 0-3 more answers (between the parts of a multipart
                // upload, or after a write): a point in the write stream, not a time, so a slow machine kills as far into
                // the stream as a fast one
                int killAfter = 1 + random.nextInt(5);
                Await.until("the acknowledgements before the kill", Duration.ofMinutes(3),
                        () -> ackedThisRound.get() >= killAfter || !writer.isAlive());
                assertThat(ackedThisRound.get()).as("round %d: acknowledged writes before the kill (the writer ended on %s)",
                                iteration, writerEnd.get())
                        .isGreaterThanOrEqualTo(killAfter);
                int killAt = answered.get() + random.nextInt(4);
                Await.until("the answers before the kill", Duration.ofMinutes(1), () -> answered.get() >= killAt || !writer.isAlive());
                acknowledgements += ackedThisRound.get();
                ferry.destroyForcibly(); // SIGKILL
                assertThat(ferry.waitFor(30, TimeUnit.SECONDS)).isTrue();
                stop.set(true);
                writer.join(30_000);
            }
        }
        assertThat(acknowledgements).as("the daemons acknowledged writes").isGreaterThanOrEqualTo(ITERATIONS);

        // restart once more: pending uploads resume by themselves; the fence says when they are all durable
        int port = Servers.freePort();
        Process ferry = Servers.ferry(dir.resolve("serve-final.log"), "serve", "--write-back", "--store-root",
                dir.resolve("store").toString(), "--cache-dir", dir.resolve("cache").toString(), "--port", Integer.toString(port));
        try {
            Servers.awaitPort(port, Duration.ofSeconds(90), ferry);
            try (HttpClient http = HttpClient.newHttpClient()) {
                HttpResponse<String> flush = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                        + "/_ferry/v1/flush?timeout_ms=120000")).POST(HttpRequest.BodyPublishers.noBody()).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(flush.statusCode()).as(flush.body()).isEqualTo(200);
                assertThat(flush.body()).contains("\"complete\":true");
            }
        } finally {
            Servers.stop(ferry);
        }
        for (Map.Entry<Integer, Long> a : acked.entrySet()) {
            int k = a.getKey();
            byte[] stored = Files.readAllBytes(store.resolve("k" + k));
            long storedVersion = ByteBuffer.wrap(stored).getLong();
            assertThat(storedVersion).as("checkpoint k%d: acknowledged v%d, at most v%d attempted", k, a.getValue(), attempted.get(k))
                    .isBetween(a.getValue(), attempted.get(k));
            assertThat(stored).as("checkpoint k%d holds v%d byte for byte", k, storedVersion).isEqualTo(content(k, storedVersion));
        }
    }
}
