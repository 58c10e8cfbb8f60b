package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.StoreCredentials;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.ChecksumType;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.GetObjectAttributesResponse;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ObjectAttributes;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * S3's additional checksums through the daemon, with the AWS SDK for Java v2 (which sends them by default):
 * a PUT's checksum is kept and answered on GET and HEAD when asked for ({@code x-amz-checksum-mode: ENABLED}),
 * a multipart upload that declared an algorithm gets S3's composite ({@code base64(alg(part checksums))-N}) or
 * full-object checksum, a wrong part checksum at Complete is refused, and GetObjectAttributes tells them, in every
 * mode: a folder store, write-back (before and after the upload) and an S3 upstream (the embedded store).
 */
@ExtendWith(StoreCredentials.class)
class ChecksumTest {
    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static String b64(byte[] raw) {
        return Base64.getEncoder().encodeToString(raw);
    }

    private static byte[] sha256(byte[]... parts) throws Exception {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        for (byte[] p : parts) {
            d.update(p);
        }
        return d.digest();
    }

    private static byte[] crc(java.util.zip.Checksum c, byte[]... parts) {
        for (byte[] p : parts) {
            c.update(p, 0, p.length);
        }
        return ByteBuffer.allocate(4).putInt((int) c.getValue()).array();
    }

    private static void flush(DaemonFixture ferry) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=30000"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void put_keepsItsChecksum_andAnswersItWhenAsked(String mode, @TempDir Path dir) throws Exception {
        byte[] data = random(300_000, 1);
        String crc32c = b64(crc(new CRC32C(), data));
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            PutObjectResponse put = s3.putObject(b -> b.bucket("data").key("ckpt.pt").checksumAlgorithm(ChecksumAlgorithm.CRC32_C),
                    RequestBody.fromBytes(data));
            assertThat(put.checksumCRC32C()).as("the PUT's answer names the checksum kept").isEqualTo(crc32c);
            for (int round = 0; round < 2; round++) { // before the upload (write-back) and after
                HeadObjectResponse head = s3.headObject(b -> b.bucket("data").key("ckpt.pt").checksumMode(ChecksumMode.ENABLED));
                assertThat(head.checksumCRC32C()).isEqualTo(crc32c);
                assertThat(head.checksumType()).isEqualTo(ChecksumType.FULL_OBJECT);
                assertThat(s3.headObject(b -> b.bucket("data").key("ckpt.pt")).checksumCRC32C()).as("only when asked").isNull();
                // the SDK validates the checksum it is answered against the bytes it reads
                ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket("data").key("ckpt.pt").checksumMode(ChecksumMode.ENABLED));
                assertThat(got.asByteArray()).isEqualTo(data);
                assertThat(got.response().checksumCRC32C()).isEqualTo(crc32c);
                GetObjectResponse ranged = s3.getObjectAsBytes(b -> b.bucket("data").key("ckpt.pt").range("bytes=0-99")
                        .checksumMode(ChecksumMode.ENABLED)).response();
                assertThat(ranged.checksumCRC32C()).as("a range has no checksum of its own").isNull();
                flush(ferry);
            }
            GetObjectAttributesResponse attrs = s3.getObjectAttributes(b -> b.bucket("data").key("ckpt.pt").objectAttributes(
                    ObjectAttributes.E_TAG, ObjectAttributes.CHECKSUM, ObjectAttributes.OBJECT_PARTS, ObjectAttributes.STORAGE_CLASS,
                    ObjectAttributes.OBJECT_SIZE));
            assertThat(attrs.eTag()).isEqualTo(s3.headObject(b -> b.bucket("data").key("ckpt.pt")).eTag().replace("\"", ""));
            assertThat(attrs.checksum().checksumCRC32C()).isEqualTo(crc32c);
            assertThat(attrs.objectSize()).isEqualTo(data.length);
            assertThat(attrs.storageClassAsString()).isEqualTo("STANDARD");
            assertThat(attrs.objectParts()).as("one PUT: no parts").isNull();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void multipart_getsS3sCompositeChecksum_ofItsParts(String mode, @TempDir Path dir) throws Exception {
        byte[] one = random(5 << 20, 2);
        byte[] two = random(1234, 3);
        String expected = b64(sha256(sha256(one), sha256(two))) + "-2";
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            CreateMultipartUploadResponse created = s3.createMultipartUpload(b -> b.bucket("data").key("shard.tar")
                    .checksumAlgorithm(ChecksumAlgorithm.SHA256));
            assertThat(created.checksumAlgorithm()).isEqualTo(ChecksumAlgorithm.SHA256);
            assertThat(created.checksumType()).isEqualTo(ChecksumType.COMPOSITE);
            String id = created.uploadId();
            UploadPartResponse p1 = s3.uploadPart(b -> b.bucket("data").key("shard.tar").uploadId(id).partNumber(1)
                    .checksumAlgorithm(ChecksumAlgorithm.SHA256), RequestBody.fromBytes(one));
            UploadPartResponse p2 = s3.uploadPart(b -> b.bucket("data").key("shard.tar").uploadId(id).partNumber(2)
                    .checksumAlgorithm(ChecksumAlgorithm.SHA256), RequestBody.fromBytes(two));
            assertThat(p1.checksumSHA256()).isEqualTo(b64(sha256(one)));
            CompleteMultipartUploadResponse done = s3.completeMultipartUpload(b -> b.bucket("data").key("shard.tar").uploadId(id)
                    .multipartUpload(m -> m.parts(
                            CompletedPart.builder().partNumber(1).eTag(p1.eTag()).checksumSHA256(p1.checksumSHA256()).build(),
                            CompletedPart.builder().partNumber(2).eTag(p2.eTag()).checksumSHA256(p2.checksumSHA256()).build())));
            assertThat(done.checksumSHA256()).isEqualTo(expected);
            assertThat(done.checksumType()).isEqualTo(ChecksumType.COMPOSITE);
            for (int round = 0; round < 2; round++) {
                HeadObjectResponse head = s3.headObject(b -> b.bucket("data").key("shard.tar").checksumMode(ChecksumMode.ENABLED));
                assertThat(head.checksumSHA256()).as("round %d", round).isEqualTo(expected);
                assertThat(head.checksumType()).isEqualTo(ChecksumType.COMPOSITE);
                flush(ferry);
            }
            GetObjectAttributesResponse attrs = s3.getObjectAttributes(b -> b.bucket("data").key("shard.tar")
                    .objectAttributes(ObjectAttributes.CHECKSUM, ObjectAttributes.OBJECT_PARTS, ObjectAttributes.OBJECT_SIZE));
            assertThat(attrs.checksum().checksumSHA256()).isEqualTo(expected);
            assertThat(attrs.checksum().checksumType()).isEqualTo(ChecksumType.COMPOSITE);
            assertThat(attrs.objectParts().totalPartsCount()).isEqualTo(2);
            assertThat(attrs.objectSize()).isEqualTo(one.length + two.length);
            if (!mode.equals("s3")) { // the stores that assemble an upload keep its parts; over S3 they are the upstream's
                assertThat(attrs.objectParts().parts()).extracting(p -> p.partNumber() + " " + p.size() + " " + p.checksumSHA256())
                        .containsExactly("1 " + one.length + " " + b64(sha256(one)), "2 " + two.length + " " + b64(sha256(two)));
                GetObjectAttributesResponse paged = s3.getObjectAttributes(b -> b.bucket("data").key("shard.tar")
                        .objectAttributes(ObjectAttributes.OBJECT_PARTS).maxParts(1).partNumberMarker(1));
                assertThat(paged.objectParts().parts()).extracting(p -> p.partNumber()).containsExactly(2);
                assertThat(paged.objectParts().isTruncated()).isFalse();
                // a part's read names the part's checksum, which the SDK checks against the part's bytes
                ResponseBytes<GetObjectResponse> part = s3.getObjectAsBytes(b -> b.bucket("data").key("shard.tar").partNumber(2)
                        .checksumMode(ChecksumMode.ENABLED));
                assertThat(part.asByteArray()).isEqualTo(two);
                assertThat(part.response().checksumSHA256()).isEqualTo(b64(sha256(two)));
                assertThat(part.response().partsCount()).isEqualTo(2);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void multipart_askingForAFullObjectCrc_getsTheCrcOfAllItsBytes(String mode, @TempDir Path dir) throws Exception {
        byte[] one = random(5 << 20, 4);
        byte[] two = random(777, 5);
        String expected = b64(crc(new CRC32(), one, two));
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            String id = s3.createMultipartUpload(b -> b.bucket("data").key("full").checksumAlgorithm(ChecksumAlgorithm.CRC32)
                    .checksumType(ChecksumType.FULL_OBJECT)).uploadId();
            UploadPartResponse p1 = s3.uploadPart(b -> b.bucket("data").key("full").uploadId(id).partNumber(1)
                    .checksumAlgorithm(ChecksumAlgorithm.CRC32), RequestBody.fromBytes(one));
            UploadPartResponse p2 = s3.uploadPart(b -> b.bucket("data").key("full").uploadId(id).partNumber(2)
                    .checksumAlgorithm(ChecksumAlgorithm.CRC32), RequestBody.fromBytes(two));
            CompleteMultipartUploadResponse done = s3.completeMultipartUpload(b -> b.bucket("data").key("full").uploadId(id)
                    .multipartUpload(m -> m.parts(
                            CompletedPart.builder().partNumber(1).eTag(p1.eTag()).checksumCRC32(p1.checksumCRC32()).build(),
                            CompletedPart.builder().partNumber(2).eTag(p2.eTag()).checksumCRC32(p2.checksumCRC32()).build())));
            assertThat(done.checksumCRC32()).isEqualTo(expected);
            assertThat(done.checksumType()).isEqualTo(ChecksumType.FULL_OBJECT);
            flush(ferry);
            HeadObjectResponse head = s3.headObject(b -> b.bucket("data").key("full").checksumMode(ChecksumMode.ENABLED));
            assertThat(head.checksumCRC32()).isEqualTo(expected);
            // a whole-object checksum is one the SDK checks while it reads
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("full").checksumMode(ChecksumMode.ENABLED)).asByteArray())
                    .hasSize(one.length + two.length);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back"}) // over S3 the upstream checks Complete's part checksums (s3proxy does not)
    void complete_namingAPartChecksumThatIsNotThePart_is400InvalidPart(String mode, @TempDir Path dir) throws Exception {
        byte[] data = random(1000, 6);
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            String id = s3.createMultipartUpload(b -> b.bucket("data").key("lied").checksumAlgorithm(ChecksumAlgorithm.SHA256)).uploadId();
            UploadPartResponse p1 = s3.uploadPart(b -> b.bucket("data").key("lied").uploadId(id).partNumber(1)
                    .checksumAlgorithm(ChecksumAlgorithm.SHA256), RequestBody.fromBytes(data));
            String other = b64(sha256("other bytes".getBytes()));
            assertThatThrownBy(() -> s3.completeMultipartUpload(b -> b.bucket("data").key("lied").uploadId(id).multipartUpload(m -> m.parts(
                    CompletedPart.builder().partNumber(1).eTag(p1.eTag()).checksumSHA256(other).build())))).satisfies(e -> {
                        S3Exception s = (S3Exception) e;
                        assertThat(s.statusCode()).isEqualTo(400);
                        assertThat(s.awsErrorDetails().errorCode()).isEqualTo("InvalidPart");
                    });
            assertThatThrownBy(() -> s3.headObject(b -> b.bucket("data").key("lied"))).as("nothing was made").isInstanceOf(S3Exception.class);
        }
    }

    /**
     * The checksum a client sent travels with the upload, so bytes changed between the daemon and the store are
     * refused by the store (s3proxy checks it) and nothing is kept; the client, whose bytes were right, gets a 503
     * it retries, not the store's 400. An {@link AlteringRelay} between the daemon and the embedded store changes them.
     */
    @org.junit.jupiter.api.Test
    void writeThrough_bytesChangedOnTheWayToTheStore_areRefusedThere_andTheClientGets503(@TempDir Path dir) throws Exception {
        String original = "\u0001ferry-original-bytes";
        byte[] body = ("weights " + original + " more weights").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        try (dev.ferry.embedded.EmbeddedStore store = dev.ferry.embedded.EmbeddedStore.start(dir.resolve("origin"), 0,
                dev.ferry.embedded.CloudProfile.none());
                AlteringRelay relay = new AlteringRelay(store.endpoint(), original, "\u0001ferry-CHANGED!-bytes");
                DaemonFixture ferry = DaemonFixture.overUpstream(relay.endpoint(), dir).with("cache-size", "64MiB").start();
                S3Client s3 = S3Client.builder().endpointOverride(ferry.endpoint()).forcePathStyle(true)
                        .region(software.amazon.awssdk.regions.Region.US_EAST_1)
                        .credentialsProvider(software.amazon.awssdk.auth.credentials.StaticCredentialsProvider.create(
                                software.amazon.awssdk.auth.credentials.AwsBasicCredentials.create("ferry", "ferry")))
                        .overrideConfiguration(o -> o.retryStrategy(software.amazon.awssdk.retries.DefaultRetryStrategy.doNotRetry()))
                        .httpClientBuilder(software.amazon.awssdk.http.apache.ApacheHttpClient.builder()).build()) {
            s3.createBucket(b -> b.bucket("data"));
            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("data").key("model.bin").checksumAlgorithm(ChecksumAlgorithm.CRC32),
                    RequestBody.fromBytes(body))).satisfies(e -> {
                        S3Exception s = (S3Exception) e;
                        assertThat(s.statusCode()).isEqualTo(503);
                        assertThat(s.awsErrorDetails().errorCode()).isEqualTo("ServiceUnavailable");
                        assertThat(s.awsErrorDetails().errorMessage()).contains("changed on the way");
                    });
            assertThatThrownBy(() -> s3.headObject(b -> b.bucket("data").key("model.bin"))).as("nothing kept").isInstanceOf(S3Exception.class);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "s3"})
    void createMultipartUpload_refusesWhatS3Cannot(String mode, @TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.inMode(mode, dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            assertThatThrownBy(() -> s3.createMultipartUpload(b -> b.bucket("data").key("x").checksumAlgorithm(ChecksumAlgorithm.SHA256)
                    .checksumType(ChecksumType.FULL_OBJECT))).satisfies(e -> {
                        assertThat(((S3Exception) e).statusCode()).isEqualTo(400);
                        assertThat(((S3Exception) e).awsErrorDetails().errorCode()).isEqualTo("InvalidRequest");
                    });
        }
    }
}
