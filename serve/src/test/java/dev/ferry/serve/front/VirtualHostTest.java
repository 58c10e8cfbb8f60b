package dev.ferry.serve.front;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.DaemonFixture;
import dev.ferry.serve.RawHttp;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Virtual-hosted-style addressing: the AWS SDK for Java v2 with {@code forcePathStyle(false)} sends
 * {@code Host: data.localhost:PORT} and the key as the path, signed (SigV4 over that Host). This machine's
 * resolver (nsswitch {@code files dns}) does not resolve {@code *.localhost}, so the SDK's HTTP client gets
 * a DNS resolver that answers loopback for names under {@code localhost}, as systemd-resolved and browsers do.
 */
class VirtualHostTest {
    private static final String ACCESS = "AKVHOSTTEST";
    private static final String SECRET = "vh/s3cr3t";

    /** The SDK as a user would set it up for virtual-hosted style against {@code http://localhost:PORT}. */
    private static S3Client virtualHosted(DaemonFixture ferry, String secret) {
        return S3Client.builder().endpointOverride(URI.create("http://localhost:" + ferry.daemon.port())).forcePathStyle(false)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS, secret)))
                .httpClientBuilder(ApacheHttpClient.builder().dnsResolver(VirtualHostTest::loopbackForLocalhost)).build();
    }

    private static InetAddress[] loopbackForLocalhost(String host) throws UnknownHostException {
        if (host.equals("localhost") || host.endsWith(".localhost")) {
            return new InetAddress[] {InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1})};
        }
        throw new UnknownHostException(host + " (this test resolves only names under localhost)");
    }

    @Test
    void sdk_withVirtualHostedStyle_readsWritesAndListsASignedBucket(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("access-key", ACCESS).with("secret-key", SECRET).start();
                S3Client s3 = virtualHosted(ferry, SECRET); S3Client pathStyle = ferry.sdk(ACCESS, SECRET)) {
            var put = s3.putObject(b -> b.bucket("data").key("dir/hello world.txt"), RequestBody.fromString("hello"));
            assertThat(put.sdkHttpResponse().statusCode()).isEqualTo(200);
            assertThat(java.nio.file.Files.readString(ferry.root.resolve("data/dir/hello world.txt"))).isEqualTo("hello");
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("dir/hello world.txt")).asUtf8String()).isEqualTo("hello");
            assertThat(s3.listObjectsV2(b -> b.bucket("data").prefix("dir/")).contents()).extracting(S3Object::key)
                    .containsExactly("dir/hello world.txt");
            s3.headBucket(b -> b.bucket("data"));
            s3.copyObject(b -> b.sourceBucket("data").sourceKey("dir/hello world.txt").destinationBucket("data").destinationKey("copy"));
            assertThat(pathStyle.getObjectAsBytes(b -> b.bucket("data").key("copy")).asUtf8String())
                    .as("the same objects by path style").isEqualTo("hello");
            s3.deleteObject(b -> b.bucket("data").key("copy"));
            assertThat(ferry.root.resolve("data/copy")).doesNotExist();

            try (S3Client forged = virtualHosted(ferry, "not-the-secret")) {
                assertThatThrownBy(() -> forged.getObject(b -> b.bucket("data").key("dir/hello world.txt")))
                        .satisfies(e -> assertThat(((S3Exception) e).statusCode()).isEqualTo(403));
            }
        }
    }

    @Test
    void hostHeader_namesTheBucketOnlyUnderTheConfiguredDomains(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).start(); S3Client s3 = ferry.sdk("a", "b")) {
            s3.putObject(b -> b.bucket("data").key("k"), RequestBody.fromString("value"));
            int port = ferry.daemon.port();
            assertThat(get(port, "/k", "data.localhost:" + port).body()).isEqualTo("value");
            assertThat(get(port, "/k", "DATA.LocalHost").body()).as("host names are case-insensitive").isEqualTo("value");
            assertThat(get(port, "/", "data.localhost").body()).contains("<Key>k</Key>");
            assertThat(get(port, "/data/k", "127.0.0.1:" + port).body()).as("path style stays").isEqualTo("value");
            assertThat(get(port, "/data/k", "localhost:" + port).body()).as("the bare domain is path style").isEqualTo("value");
            RawHttp.Answer bad = get(port, "/k", "no_such_bucket.localhost");
            assertThat(bad.status()).isEqualTo(400);
            assertThat(bad.body()).contains("InvalidBucketName");
        }
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir.resolve("custom")).with("virtual-host", "s3.ferry.internal").start();
                S3Client s3 = ferry.sdk("a", "b")) {
            s3.putObject(b -> b.bucket("data").key("k"), RequestBody.fromString("value"));
            int port = ferry.daemon.port();
            assertThat(get(port, "/k", "data.s3.ferry.internal:" + port).body()).isEqualTo("value");
            assertThat(get(port, "/data/k", "data.localhost").body()).as("localhost is no longer a virtual-host domain: path style")
                    .isEqualTo("value");
        }
    }

    private static RawHttp.Answer get(int port, String path, String host) throws Exception {
        return RawHttp.exchange(port, "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
    }
}
