package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * As a user would: {@code ferry store --root D --port N --profile cloud} in its own process, then awscli
 * (the real one, a separate Python program) and a plain HTTP client against it.
 */
class AwsCliTest {
    static final int LATENCY_MS = 40;

    @TempDir
    Path dir;
    Path data;
    Process ferry;
    Path aws;
    String endpoint;
    Map<String, String> env;

    /** Starts {@code ferry store} over a fresh folder with the cloud profile and {@code extra} options. */
    void start(String... extra) throws Exception {
        aws = Servers.onPath("aws");
        Servers.requireTool(aws != null, "awscli ('aws')");
        data = Files.createDirectories(dir.resolve("D"));
        Files.createDirectories(data.resolve("images"));
        Files.createDirectories(data.resolve("shards"));
        Files.writeString(data.resolve("shards/hello.txt"), "hello");
        for (int i = 0; i < 30; i++) {
            Files.createDirectories(data.resolve("shards/small"));
            Files.writeString(data.resolve("shards/small/" + i + ".txt"), "sample " + i);
        }
        int port = Servers.freePort();
        List<String> args = new ArrayList<>(List.of("store", "--root", data.toString(), "--port", Integer.toString(port),
                "--profile", "cloud", "--latency-ms", Integer.toString(LATENCY_MS)));
        args.addAll(List.of(extra));
        ferry = Servers.ferry(dir.resolve("ferry.log"), args.toArray(String[]::new));
        Servers.awaitPort(port, Duration.ofSeconds(60), ferry);
        endpoint = "http://127.0.0.1:" + port;
        env = new HashMap<>();
        env.put("AWS_ACCESS_KEY_ID", "ferry");
        env.put("AWS_SECRET_ACCESS_KEY", "ferry-secret");
        env.put("AWS_DEFAULT_REGION", "us-east-1");
        env.put("AWS_CONFIG_FILE", dir.resolve("no-config").toString());
        env.put("AWS_SHARED_CREDENTIALS_FILE", dir.resolve("no-credentials").toString());
        env.put("AWS_MAX_ATTEMPTS", "1"); // show SlowDown instead of retrying it away
        env.put("AWS_RETRY_MODE", "standard");
    }

    @AfterEach
    void stop() throws InterruptedException {
        Servers.stop(ferry);
    }

    private Servers.Result aws(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(aws.toString(), "--endpoint-url", endpoint));
        command.addAll(List.of(args));
        return Servers.run(Duration.ofMinutes(3), env, command.toArray(String[]::new));
    }

    @Test
    void ls_listsTheFoldersAsBuckets_andcp_roundTrips64MiB() throws Exception {
        start();
        Servers.Result ls = aws("s3", "ls");
        assertThat(ls.exitCode()).as(ls.output()).isZero();
        assertThat(ls.output()).contains("images").contains("shards");

        byte[] bytes = new byte[64 << 20];
        new Random(42).nextBytes(bytes);
        Path original = Files.write(dir.resolve("original.bin"), bytes);
        Servers.Result up = aws("s3", "cp", "--only-show-errors", original.toString(), "s3://images/big/original.bin");
        assertThat(up.exitCode()).as(up.output()).isZero();
        assertThat(Files.mismatch(original, data.resolve("images/big/original.bin"))).isEqualTo(-1);
        Path back = dir.resolve("back.bin");
        Servers.Result down = aws("s3", "cp", "--only-show-errors", "s3://images/big/original.bin", back.toString());
        assertThat(down.exitCode()).as(down.output()).isZero();
        assertThat(Files.mismatch(original, back)).isEqualTo(-1);
    }

    @Test
    void burstOverThePrefixLimit_meetsSlowDown() throws Exception {
        start("--prefix-rps", "5");
        // awscli fetches these 30 objects ten at a time: a burst far over 5 requests/s on one prefix
        Servers.Result r = aws("s3", "cp", "--recursive", "--only-show-errors", "s3://shards/small/", dir.resolve("copy").toString());
        assertThat(r.exitCode()).as(r.output()).isNotZero();
        assertThat(r.output()).contains("SlowDown");
    }

    @Test
    void firstByte_takesAtLeastTheConfiguredLatency() throws Exception {
        start();
        HttpClient http = HttpClient.newHttpClient();
        for (int i = 0; i < 3; i++) { // the latency is waited per request, so back to back is as good as apart
            long start = System.nanoTime();
            HttpResponse<java.io.InputStream> r = http.send(HttpRequest.newBuilder(URI.create(endpoint + "/shards/hello.txt")).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            int first = r.body().read();
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(first).isEqualTo('h');
            assertThat(millis).isGreaterThanOrEqualTo(LATENCY_MS);
            r.body().close();
        }
    }
}
