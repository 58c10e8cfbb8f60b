package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ferry's own S3 conformance checks: {@code ferry serve} in its own process, then the boto3 script
 * {@code s3_conformance.py} (one call or short sequence per point of what clients expect of an S3 endpoint,
 * each asserted), and awscli's copies within a bucket ({@code s3 cp s3://b/x s3://b/y}, {@code s3 mv}),
 * which are CopyObject, or UploadPartCopy for objects over awscli's 8 MiB multipart threshold.
 */
class ServeConformanceTest {
    @TempDir
    Path dir;
    Process ferry;
    String endpoint;
    Map<String, String> env;

    /**
     * {@code ferry serve} over {@code upstream}: a folder store ({@code folder}, {@code write-back}) or an S3
     * endpoint ({@code s3}: the embedded store, as {@code ferry serve} runs by default, without its latency profile).
     */
    void start(String upstream, String... extra) throws Exception {
        Files.createDirectories(dir.resolve("store/data"));
        int port = Servers.freePort();
        List<String> args = new ArrayList<>(List.of("serve", "--cache-dir", dir.resolve("cache").toString(), "--cache-size", "1GiB",
                "--port", Integer.toString(port)));
        args.addAll(upstream.equals("s3") ? List.of("--data-dir", dir.resolve("upstream").toString(), "--profile", "none")
                : List.of("--store-root", dir.resolve("store").toString()));
        if (upstream.equals("write-back")) {
            args.add("--write-back");
        }
        args.addAll(List.of(extra));
        ferry = Servers.ferry(dir.resolve("serve.log"), args.toArray(String[]::new));
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
        env.put("AWS_SHARED_CREDENTIALS_FILE", dir.resolve("no-credentials").toString());
    }

    @AfterEach
    void stop() throws Exception {
        if (ferry != null) {
            Servers.stop(ferry);
        }
    }

    /** In each mode: over a folder store, with write-back, and over an S3 upstream (what {@code ferry serve} runs by default). */
    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back", "s3"})
    void boto3_conformanceScript(String mode) throws Exception {
        Path python = Servers.onPath("python3");
        Servers.requireTool(python != null, "python3");
        Servers.requireTool(Servers.run(Duration.ofMinutes(1), Map.of(), python.toString(), "-c", "import boto3").exitCode() == 0, "boto3");
        start(mode);
        Path script = dir.resolve("s3_conformance.py");
        try (InputStream in = ServeConformanceTest.class.getResourceAsStream("/s3_conformance.py")) {
            Files.write(script, in.readAllBytes());
        }
        Servers.Result r = Servers.run(Duration.ofMinutes(5), env, python.toString(), script.toString(), endpoint, "conformance", mode);
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("ok CopyObject").contains("ok checksums of a multipart upload").contains("ok ACLs")
                .contains("ok ListMultipartUploads").contains("ok virtual-hosted style").contains("conformance ok");
    }

    @ParameterizedTest
    @ValueSource(strings = {"folder", "write-back"})
    void awscli_cpAndMvWithinABucket(String mode) throws Exception {
        Path aws = Servers.onPath("aws");
        Servers.requireTool(aws != null, "awscli ('aws')");
        start(mode);
        byte[] small = "a checkpoint".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] big = new byte[20 << 20]; // over awscli's 8 MiB threshold: a multipart copy, UploadPartCopy per part
        new Random(5).nextBytes(big);
        Path ckpt = Files.createDirectories(dir.resolve("ckpt"));
        Files.write(ckpt.resolve("small.pt"), small);
        Files.write(ckpt.resolve("big.pt"), big);
        aws(aws, "s3", "cp", "--only-show-errors", "--recursive", ckpt.toString(), "s3://data/ckpt/"); // one awscli run: two PUTs

        aws(aws, "s3", "cp", "--only-show-errors", "s3://data/ckpt/small.pt", "s3://data/copies/small.pt");
        aws(aws, "s3", "cp", "--only-show-errors", "s3://data/ckpt/big.pt", "s3://data/copies/big.pt");
        aws(aws, "s3", "mv", "--only-show-errors", "s3://data/ckpt/big.pt", "s3://data/moved/big.pt");
        aws(aws, "s3", "mv", "--only-show-errors", "s3://data/ckpt/small.pt", "s3://data/moved/small.pt");

        String listing = aws(aws, "s3", "ls", "--recursive", "s3://data/").output();
        assertThat(listing).contains("copies/small.pt", "copies/big.pt", "moved/small.pt", "moved/big.pt").doesNotContain("ckpt/");
        Path back = dir.resolve("back");
        aws(aws, "s3", "cp", "--only-show-errors", "--recursive", "s3://data/", back.toString()); // a listing, then a GET each
        for (String key : List.of("copies/small.pt", "moved/small.pt", "copies/big.pt", "moved/big.pt")) {
            assertThat(Files.readAllBytes(back.resolve(key))).as(key).isEqualTo(key.contains("big") ? big : small);
        }
    }

    private Servers.Result aws(Path aws, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(aws.toString(), "--endpoint-url", endpoint));
        command.addAll(List.of(args));
        Servers.Result r = Servers.run(Duration.ofMinutes(3), env, command.toArray(String[]::new));
        assertThat(r.exitCode()).as("aws %s: %s", String.join(" ", args), r.output()).isZero();
        return r;
    }
}
