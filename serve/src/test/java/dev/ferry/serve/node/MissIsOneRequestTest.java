package dev.ferry.serve.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.Checksum;
import dev.ferry.store.ObjectAttributes;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.time.Await;
import dev.ferry.time.ManualClock;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;

/**
 * What reads through the daemon cost the object store (issue 26), counted by op as the daemon's status reports
 * them: a cold GET is one GET with no HEAD before it, its answer the object's metadata; a client's HEAD is still a
 * HEAD; a warm read of metadata older than the TTL sends nothing in front of it, and a change made upstream
 * behind ferry's back is seen within twice the TTL. The origin is the embedded S3 server, spoken to over S3.
 */
class MissIsOneRequestTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The origin's requests so far, by op (head, get), from the daemon's status. */
    private static JsonNode byOp(DaemonFixture ferry) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            String body = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/status")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            return JSON.readTree(body).path("tiers").path("origin").path("requests_by_op");
        }
    }

    private static long delta(JsonNode before, JsonNode after, String op) {
        return after.path(op).asLong() - before.path(op).asLong();
    }

    /** Writes straight to the origin, behind the local tier: ferry's cache knows nothing of it. */
    private static ObjectMeta putBehind(DaemonFixture ferry, String key, byte[] data, ObjectAttributes attributes) throws Exception {
        ObjectStore below = ferry.daemon.node().stack().belowCache();
        return below.put(ObjectKey.of("data", key), PutBody.ofBytes(data).withAttributes(attributes));
    }

    @Test
    void coldGets_areOneGetEach_withNoHead_andAnswerTheObjectsMetadata(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("prefetch-bytes", "0").start(); S3Client s3 = ferry.sdk("a", "b")) {
            Random random = new Random(26);
            List<byte[]> contents = new ArrayList<>();
            List<String> etags = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                byte[] data = new byte[5000 + random.nextInt(30_000)];
                random.nextBytes(data);
                contents.add(data);
                etags.add(putBehind(ferry, "img-" + i + ".jpg", data,
                        new ObjectAttributes(Map.of("content-type", "image/jpeg", "x-amz-meta-label", "n" + i))).etag());
            }
            JsonNode before = byOp(ferry);
            for (int i = 0; i < 20; i++) {
                int n = i;
                ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket("data").key("img-" + n + ".jpg"));
                assertThat(got.asByteArray()).isEqualTo(contents.get(i));
                assertThat(got.response().eTag()).isEqualTo("\"" + etags.get(i) + "\"");
                assertThat(got.response().contentType()).isEqualTo("image/jpeg");
                assertThat(got.response().metadata()).containsEntry("label", "n" + i);
                assertThat(got.response().contentLength()).isEqualTo(contents.get(i).length);
                assertThat(got.response().lastModified()).isNotNull();
            }
            JsonNode after = byOp(ferry);
            assertThat(delta(before, after, "head")).as("HEADs for 20 cold GETs").isZero();
            assertThat(delta(before, after, "get")).as("GETs for 20 cold GETs").isEqualTo(20);

            // a cold ranged GET: one GET of the block it starts in, the range cut from it
            byte[] big = new byte[3 << 20];
            random.nextBytes(big);
            putBehind(ferry, "big.bin", big, ObjectAttributes.NONE);
            before = byOp(ferry);
            ResponseBytes<GetObjectResponse> part = s3.getObjectAsBytes(b -> b.bucket("data").key("big.bin").range("bytes=1048580-1048779"));
            assertThat(part.asByteArray()).isEqualTo(Arrays.copyOfRange(big, 1048580, 1048780));
            assertThat(part.response().contentRange()).isEqualTo("bytes 1048580-1048779/" + big.length);
            after = byOp(ferry);
            assertThat(delta(before, after, "head")).isZero();
            assertThat(delta(before, after, "get")).isEqualTo(1);

            // a client's HEAD of a cold key is a HEAD
            putBehind(ferry, "headed.txt", "x".getBytes(StandardCharsets.UTF_8), ObjectAttributes.NONE);
            before = byOp(ferry);
            assertThat(s3.headObject(b -> b.bucket("data").key("headed.txt")).contentLength()).isEqualTo(1);
            after = byOp(ferry);
            assertThat(delta(before, after, "head")).isEqualTo(1);
            assertThat(delta(before, after, "get")).isZero();
        }
    }

    @Test
    void coldGets_ofEmptyAndMissingObjects(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("prefetch-bytes", "0").start(); S3Client s3 = ferry.sdk("a", "b")) {
            String etag = putBehind(ferry, "empty", new byte[0], ObjectAttributes.NONE).etag();
            ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket("data").key("empty"));
            assertThat(got.asByteArray()).isEmpty();
            assertThat(got.response().eTag()).isEqualTo("\"" + etag + "\"");
            assertThatThrownBy(() -> s3.getObjectAsBytes(b -> b.bucket("data").key("empty").range("bytes=0-9")))
                    .hasMessageContaining("416");

            JsonNode before = byOp(ferry);
            assertThatThrownBy(() -> s3.getObjectAsBytes(b -> b.bucket("data").key("no/such/key"))).isInstanceOf(NoSuchKeyException.class);
            JsonNode after = byOp(ferry);
            assertThat(delta(before, after, "head")).isZero();
            assertThat(delta(before, after, "get")).isEqualTo(1);
            assertThatThrownBy(() -> s3.getObjectAsBytes(b -> b.bucket("no-such-bucket").key("k"))).isInstanceOf(NoSuchBucketException.class);

            // what was missing and is then written behind ferry's back is found by the next read (nothing negative is kept)
            putBehind(ferry, "no/such/key", "here now".getBytes(StandardCharsets.UTF_8), ObjectAttributes.NONE);
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("no/such/key")).asUtf8String()).isEqualTo("here now");
        }
    }

    @Test
    void aChecksumAskedForAfterAColdGet_isAnswered_byAHeadThen(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("prefetch-bytes", "0").start(); S3Client s3 = ferry.sdk("a", "b")) {
            byte[] data = new byte[100_000];
            new Random(5).nextBytes(data);
            Checksum crc = Checksum.ofStream(Checksum.Algorithm.CRC32C, new java.io.ByteArrayInputStream(data));
            putBehind(ferry, "ckpt.pt", data, crc.applyTo(ObjectAttributes.NONE));
            JsonNode before = byOp(ferry);
            // a cold GET asking for the checksum, as the SDKs do by default: one GET, no HEAD first
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("ckpt.pt").checksumMode(ChecksumMode.ENABLED)).asByteArray())
                    .isEqualTo(data);
            assertThat(delta(before, byOp(ferry), "head")).isZero();
            assertThat(delta(before, byOp(ferry), "get")).isEqualTo(1);
            // a ranged GET's answer names no checksum: the next reads asking for it get it from one HEAD, sent in the
            // background (not in front of a read)
            Await.until("the checksum on a GET's answer", Duration.ofSeconds(10), () -> crc.value().equals(
                    s3.getObjectAsBytes(b -> b.bucket("data").key("ckpt.pt").checksumMode(ChecksumMode.ENABLED)).response().checksumCRC32C()));
            assertThat(delta(before, byOp(ferry), "head")).as("one HEAD, once").isEqualTo(1);
            assertThat(delta(before, byOp(ferry), "get")).isEqualTo(1);
            // a client's HEAD asking for it is answered it
            putBehind(ferry, "ckpt2.pt", data, crc.applyTo(ObjectAttributes.NONE));
            s3.getObjectAsBytes(b -> b.bucket("data").key("ckpt2.pt"));
            HeadObjectResponse head = s3.headObject(b -> b.bucket("data").key("ckpt2.pt").checksumMode(ChecksumMode.ENABLED));
            assertThat(head.checksumCRC32C()).isEqualTo(crc.value());
        }
    }

    @Test
    void aShuffledReaderOfAFolderOfSmallObjects_findsItReadAhead_eachObjectOneGet_withItsChecksum(@TempDir Path dir)
            throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("prefetch-bytes", "0").start(); S3Client s3 = ferry.sdk("a", "b")) {
            Random random = new Random(11);
            List<byte[]> data = new ArrayList<>();
            List<String> crcs = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                byte[] bytes = new byte[10_000 + random.nextInt(20_000)];
                random.nextBytes(bytes);
                Checksum crc = Checksum.ofStream(Checksum.Algorithm.CRC32C, new java.io.ByteArrayInputStream(bytes));
                putBehind(ferry, "imgs/" + i + ".jpg", bytes, crc.applyTo(ObjectAttributes.NONE));
                data.add(bytes);
                crcs.add(crc.value());
            }
            List<Integer> order = new ArrayList<>(java.util.stream.IntStream.range(0, 40).boxed().toList());
            java.util.Collections.shuffle(order, random);
            JsonNode before = byOp(ferry);
            int answeredChecksum = 0;
            for (int i : order) {
                ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket("data").key("imgs/" + i + ".jpg")
                        .checksumMode(ChecksumMode.ENABLED));
                assertThat(got.asByteArray()).isEqualTo(data.get(i));
                if (got.response().checksumCRC32C() != null) {
                    assertThat(got.response().checksumCRC32C()).isEqualTo(crcs.get(i));
                    answeredChecksum++;
                }
            }
            JsonNode after = byOp(ferry);
            // 4 misses (the folder's first a ranged GET, the next whole ones), then one LIST page, and the other 36 fetched
            // ahead as whole GETs asking for their checksum: each object one GET, no HEAD now or later
            assertThat(delta(before, after, "get")).as("each object once").isEqualTo(40);
            assertThat(delta(before, after, "list")).isEqualTo(1);
            assertThat(answeredChecksum).as("all but the folder's first miss answered their checksum").isEqualTo(39);
            assertThat(delta(before, after, "head")).isZero();
            // a second epoch: nothing fetched; the first miss's checksum is asked for by one HEAD, in the background
            for (int i : order) {
                assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("imgs/" + i + ".jpg").checksumMode(ChecksumMode.ENABLED))
                        .asByteArray()).isEqualTo(data.get(i));
            }
            assertThat(delta(after, byOp(ferry), "get") + delta(after, byOp(ferry), "list")).isZero();
            Await.until("the first miss's HEAD", Duration.ofSeconds(10), () -> delta(after, byOp(ferry), "head") >= 1);
            assertThat(delta(after, byOp(ferry), "head")).as("one object's, not 40").isEqualTo(1);
        }
    }

    @Test
    void inAFolderOfSmallObjects_aColdGetAskingTheChecksum_isAnsweredItFromItsOneGet(@TempDir Path dir) throws Exception {
        // the misses alone: the folder is not read ahead here (the test above reads it ahead)
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("prefetch-bytes", "0").with("read-ahead-folders", "false").start();
                S3Client s3 = ferry.sdk("a", "b")) {
            Random random = new Random(7);
            List<byte[]> small = new ArrayList<>();
            List<String> crcs = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                byte[] data = new byte[20_000 + i];
                random.nextBytes(data);
                Checksum crc = Checksum.ofStream(Checksum.Algorithm.CRC32C, new java.io.ByteArrayInputStream(data));
                putBehind(ferry, "small/" + i + ".jpg", data, crc.applyTo(ObjectAttributes.NONE));
                small.add(data);
                crcs.add(crc.value());
            }
            byte[] big = new byte[(5 << 20) / 2]; // 2.5 blocks of the fixture's 1 MiB
            random.nextBytes(big);
            Checksum bigCrc = Checksum.ofStream(Checksum.Algorithm.CRC32C, new java.io.ByteArrayInputStream(big));
            putBehind(ferry, "small/big.bin", big, bigCrc.applyTo(ObjectAttributes.NONE));

            JsonNode before = byOp(ferry);
            // the folder's first miss is a ranged GET (nothing says its objects are small yet): no checksum to answer
            ResponseBytes<GetObjectResponse> first = s3.getObjectAsBytes(b -> b.bucket("data").key("small/0.jpg").checksumMode(ChecksumMode.ENABLED));
            assertThat(first.asByteArray()).isEqualTo(small.get(0));
            assertThat(first.response().checksumCRC32C()).isNull();
            // the next misses in it GET the whole object asking for its checksum: answered it at once, one GET each
            for (int i = 1; i < 4; i++) {
                String key = "small/" + i + ".jpg";
                ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket("data").key(key).checksumMode(ChecksumMode.ENABLED));
                assertThat(got.asByteArray()).isEqualTo(small.get(i));
                assertThat(got.response().checksumCRC32C()).as(key).isEqualTo(crcs.get(i));
            }
            assertThat(delta(before, byOp(ferry), "get")).isEqualTo(4);
            assertThat(delta(before, byOp(ferry), "head")).isZero();
            // warm, asked again: the checksum is known, nothing is sent
            JsonNode warm = byOp(ferry);
            for (int i = 1; i < 4; i++) {
                String key = "small/" + i + ".jpg";
                assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key(key).checksumMode(ChecksumMode.ENABLED)).response().checksumCRC32C())
                        .isEqualTo(crcs.get(i));
            }
            assertThat(delta(warm, byOp(ferry), "get") + delta(warm, byOp(ferry), "head")).isZero();

            // an object larger than a block in that folder: its first block comes from the whole GET, cut short, the
            // rest from ranged GETs; the bytes and the checksum (the SDK checks one against the other) are right
            ResponseBytes<GetObjectResponse> bigGot = s3.getObjectAsBytes(b -> b.bucket("data").key("small/big.bin").checksumMode(ChecksumMode.ENABLED));
            assertThat(bigGot.asByteArray()).isEqualTo(big);
            assertThat(bigGot.response().checksumCRC32C()).isEqualTo(bigCrc.value());
            // and the folder's last miss was large: the next miss there is a ranged GET again
            ResponseBytes<GetObjectResponse> after = s3.getObjectAsBytes(b -> b.bucket("data").key("small/4.jpg").checksumMode(ChecksumMode.ENABLED));
            assertThat(after.asByteArray()).isEqualTo(small.get(4));
            assertThat(after.response().checksumCRC32C()).isNull();
            assertThat(delta(before, byOp(ferry), "head")).isZero();
            // a ranged read asking for the checksum is answered none, as S3 answers a range, and asks nothing for it
            JsonNode ranged = byOp(ferry);
            ResponseBytes<GetObjectResponse> part = s3.getObjectAsBytes(b -> b.bucket("data").key("small/5.jpg").range("bytes=0-99")
                    .checksumMode(ChecksumMode.ENABLED));
            assertThat(part.asByteArray()).isEqualTo(Arrays.copyOf(small.get(5), 100));
            assertThat(part.response().checksumCRC32C()).isNull();
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("small/5.jpg").range("bytes=100-199")
                    .checksumMode(ChecksumMode.ENABLED)).asByteArray()).isEqualTo(Arrays.copyOfRange(small.get(5), 100, 200));
            assertThat(delta(ranged, byOp(ferry), "get")).isEqualTo(1);
            assertThat(delta(ranged, byOp(ferry), "head")).isZero();
        }
    }

    @Test
    void warmReadsAfterTheTtl_askNothingFirst_andAReplacementIsSeenWithinTwiceTheTtl(@TempDir Path dir) throws Exception {
        long ttlMillis = 4000;
        ManualClock clock = new ManualClock(); // the daemon's: the TTL passes when the test says, however slow the machine
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("prefetch-bytes", 0).with("metadata-ttl", ttlMillis + "ms").clock(clock).start();
                S3Client s3 = ferry.sdk("a", "b")) {
            putBehind(ferry, "label.txt", "version one".getBytes(StandardCharsets.UTF_8), ObjectAttributes.NONE);
            assertThat(read(s3, "label.txt")).isEqualTo("version one");
            putBehind(ferry, "label.txt", "version two".getBytes(StandardCharsets.UTF_8), ObjectAttributes.NONE);
            clock.advanceMillis(ttlMillis + ttlMillis / 8); // past the TTL, well before twice it
            JsonNode before = byOp(ferry);
            assertThat(read(s3, "label.txt")).as("stale, served from the tier while it is revalidated").isEqualTo("version one");
            assertThat(delta(before, byOp(ferry), "get")).as("GETs for a warm read").isZero();
            Await.until("version two, once revalidated in the background", Duration.ofSeconds(10),
                    () -> read(s3, "label.txt").equals("version two"));

            // the bound: metadata twice the TTL old is asked for in front of the read
            putBehind(ferry, "label.txt", "version three".getBytes(StandardCharsets.UTF_8), ObjectAttributes.NONE);
            clock.advanceMillis(2 * ttlMillis + 100);
            assertThat(read(s3, "label.txt")).as("twice the TTL after the change").isEqualTo("version three");

            // a write through ferry is read back at once, stale or not
            clock.advanceMillis(ttlMillis + ttlMillis / 8);
            s3.putObject(b -> b.bucket("data").key("label.txt"), RequestBody.fromString("written through ferry"));
            assertThat(read(s3, "label.txt")).isEqualTo("written through ferry");
        }
    }

    private static String read(S3Client s3, String key) {
        return s3.getObjectAsBytes(b -> b.bucket("data").key(key)).asUtf8String();
    }
}
