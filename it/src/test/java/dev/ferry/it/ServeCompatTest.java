package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The compatibility suite: {@code ferry serve} in its own process, and real clients as a user runs them:
 * awscli ({@code s3 ls}, {@code s3 cp} of a 200 MiB object both ways, {@code s3 sync} of a folder,
 * {@code s3api get-object --range}) and boto3 (a paginated listing of 2,500 keys, a ranged GET, a 100 MiB
 * multipart upload). The AWS SDK for Java v2 is covered in the serve module's SdkCompatTest.
 */
class ServeCompatTest {
    @TempDir
    static Path dir;
    static Process ferry;
    static String endpoint;
    static Map<String, String> env;

    @BeforeAll
    static void start() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store/data"));
        Files.writeString(store.resolve("hello.txt"), "hello from the store");
        int port = Servers.freePort();
        ferry = Servers.ferry(dir.resolve("serve.log"), "serve", "--store-root", dir.resolve("store").toString(), "--cache-dir",
                dir.resolve("cache").toString(), "--cache-size", "1GiB", "--port", Integer.toString(port));
        try {
            Servers.awaitPort(port, Duration.ofSeconds(90), ferry);
        } catch (IOException e) {
            throw new IOException(e.getMessage() + "; its output:\n" + Files.readString(dir.resolve("serve.log")), e);
        }
        endpoint = "http://127.0.0.1:" + port;
        env = new HashMap<>();
        env.put("AWS_ACCESS_KEY_ID", "anything");
        env.put("AWS_SECRET_ACCESS_KEY", "anything");
        env.put("AWS_DEFAULT_REGION", "us-east-1");
        env.put("AWS_CONFIG_FILE", dir.resolve("no-config").toString());
    }

    @AfterAll
    static void stop() throws Exception {
        if (ferry != null) {
            Servers.stop(ferry);
        }
    }

    private static Servers.Result aws(String... args) throws Exception {
        Path aws = Servers.onPath("aws");
        Servers.requireTool(aws != null, "awscli ('aws')");
        String[] command = new String[args.length + 3];
        command[0] = aws.toString();
        command[1] = "--endpoint-url";
        command[2] = endpoint;
        System.arraycopy(args, 0, command, 3, args.length);
        Servers.Result r = Servers.run(Duration.ofMinutes(5), env, command);
        assertThat(r.exitCode()).as("aws %s: %s", String.join(" ", args), r.output()).isZero();
        return r;
    }

    private static boolean sameBytes(Path a, Path b) throws IOException {
        try (InputStream x = Files.newInputStream(a); InputStream y = Files.newInputStream(b)) {
            byte[] bx = new byte[1 << 20];
            byte[] by = new byte[1 << 20];
            while (true) {
                int nx = x.readNBytes(bx, 0, bx.length);
                int ny = y.readNBytes(by, 0, by.length);
                if (nx != ny || !java.util.Arrays.equals(bx, 0, nx, by, 0, ny)) {
                    return false;
                }
                if (nx == 0) {
                    return true;
                }
            }
        }
    }

    @Test
    void awscli() throws Exception {
        assertThat(aws("s3", "ls").output()).contains("data");
        assertThat(aws("s3", "ls", "s3://data/").output()).contains("hello.txt");

        Path big = dir.resolve("big.bin");
        byte[] chunk = new byte[1 << 20];
        Random random = new Random(3);
        try (var out = Files.newOutputStream(big)) {
            for (int i = 0; i < 200; i++) {
                random.nextBytes(chunk);
                out.write(chunk);
            }
        }
        aws("s3", "cp", "--only-show-errors", big.toString(), "s3://data/big/200MiB.bin");
        Path back = dir.resolve("back.bin");
        aws("s3", "cp", "--only-show-errors", "s3://data/big/200MiB.bin", back.toString());
        assertThat(sameBytes(big, back)).as("200 MiB round trip").isTrue();
        Path again = dir.resolve("again.bin");
        aws("s3", "cp", "--only-show-errors", "s3://data/big/200MiB.bin", again.toString()); // from the local tier
        assertThat(sameBytes(big, again)).as("200 MiB from the cache").isTrue();

        Path folder = Files.createDirectories(dir.resolve("folder/sub"));
        for (int i = 0; i < 20; i++) {
            Files.writeString(folder.resolve("f" + i + ".txt"), "file " + i);
        }
        aws("s3", "sync", "--only-show-errors", dir.resolve("folder").toString(), "s3://data/synced/");
        String listing = aws("s3", "ls", "--recursive", "s3://data/synced/").output();
        assertThat(listing.lines().filter(l -> l.contains("synced/sub/f")).count()).isEqualTo(20);
        Path down = dir.resolve("down");
        aws("s3", "sync", "--only-show-errors", "s3://data/synced/", down.toString());
        assertThat(Files.readString(down.resolve("sub/f7.txt"))).isEqualTo("file 7");
        // a second sync finds nothing to copy
        assertThat(aws("s3", "sync", "s3://data/synced/", down.toString()).output()).doesNotContain("download:");

        Path range = dir.resolve("range.out");
        aws("s3api", "get-object", "--bucket", "data", "--key", "big/200MiB.bin", "--range", "bytes=1000000-1000099", range.toString());
        byte[] expected = new byte[100];
        try (var f = java.nio.channels.FileChannel.open(big)) {
            f.read(java.nio.ByteBuffer.wrap(expected), 1_000_000);
        }
        assertThat(Files.readAllBytes(range)).isEqualTo(expected);

        Servers.Result missing = Servers.run(Duration.ofMinutes(1), env, Servers.onPath("aws").toString(), "--endpoint-url", endpoint,
                "s3api", "head-object", "--bucket", "data", "--key", "no/such/key");
        assertThat(missing.exitCode()).isNotZero();
        assertThat(missing.output()).contains("404");
    }

    @Test
    void ferryStatusShowsTheDaemonsNumbers() throws Exception {
        aws("s3", "cp", "--only-show-errors", "s3://data/hello.txt", dir.resolve("hello.out").toString());
        Servers.Result r = Servers.run(Duration.ofMinutes(2), Map.of(),
                Servers.javaCommand("dev.ferry.cli.Main", "status", "--url", endpoint).toArray(String[]::new));
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("ferry at " + endpoint).contains("local hit rate").contains("egress (origin)").contains("served");
        Servers.Result down = Servers.run(Duration.ofMinutes(2), Map.of(),
                Servers.javaCommand("dev.ferry.cli.Main", "status", "--url", "http://127.0.0.1:1").toArray(String[]::new));
        assertThat(down.exitCode()).isEqualTo(1);
        assertThat(down.output().strip()).isEqualTo("ferry: no ferry daemon answers at http://127.0.0.1:1: start one with ferry serve.");
    }

    @Test
    void boto3() throws Exception {
        Path python = Servers.onPath("python3");
        Servers.requireTool(python != null, "python3");
        Servers.Result hasBoto = Servers.run(Duration.ofMinutes(1), env, python.toString(), "-c", "import boto3");
        Servers.requireTool(hasBoto.exitCode() == 0, "boto3");
        Path script = dir.resolve("boto3_compat.py");
        try (InputStream in = ServeCompatTest.class.getResourceAsStream("/boto3_compat.py")) {
            Files.write(script, in.readAllBytes());
        }
        Servers.Result r = Servers.run(Duration.ofMinutes(5), env, python.toString(), script.toString(), endpoint, "boto-bucket",
                dir.resolve("boto-upload.bin").toString());
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("boto3 ok");
    }
}
