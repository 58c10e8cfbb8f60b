package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Real S3 clients run as a user would run them: boto3 scripts and the awscli. Without them a test fails under
 * {@code FERRY_REQUIRE_REAL_CLIENTS=1} (scripts/test) and is skipped otherwise.
 */
final class Clients {
    private Clients() {
    }

    private static void require(boolean present, String what) {
        if (present) {
            return;
        }
        String reason = what + " is not installed here; scripts/test installs it";
        if ("1".equals(System.getenv("FERRY_REQUIRE_REAL_CLIENTS"))) {
            throw new AssertionError(reason);
        }
        Assumptions.abort(reason);
    }

    private static boolean runs(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** Runs a Python script with {@code args} (sys.argv[1:]); fails the test unless it exits 0. Returns its output. */
    static String python(Path dir, String script, String... args) throws Exception {
        require(runs("python3", "-c", "import boto3"), "python3 with boto3");
        Path file = Files.createTempFile(dir, "client-", ".py");
        Files.writeString(file, script);
        List<String> command = new ArrayList<>(List.of("python3", file.toString()));
        command.addAll(List.of(args));
        return run(new ProcessBuilder(command), "python3");
    }

    /** Runs {@code aws --endpoint-url endpoint args...} with throwaway credentials; fails the test unless it exits 0. */
    static String awsCli(String endpoint, String... args) throws Exception {
        require(runs("aws", "--version"), "the awscli");
        List<String> command = new ArrayList<>(List.of("aws", "--endpoint-url", endpoint, "--region", "us-east-1"));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(Map.of("AWS_ACCESS_KEY_ID", "a", "AWS_SECRET_ACCESS_KEY", "b", "AWS_EC2_METADATA_DISABLED", "true"));
        return run(pb, "aws");
    }

    private static String run(ProcessBuilder pb, String what) throws Exception {
        Process p = pb.redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(what + " finished").isTrue();
        String text = new String(out, java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(what + ": " + text).isZero();
        return text;
    }
}
