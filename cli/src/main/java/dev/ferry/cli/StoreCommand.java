package dev.ferry.cli;

import dev.ferry.cli.errors.UserError;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.time.Clock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ferry store}: the embedded S3-compatible server over a directory. */
@Command(name = "store", mixinStandardHelpOptions = true,
        description = {"Serve a directory as an S3-compatible object store on 127.0.0.1, or --bind (top-level folders are buckets).",
                "The cloud profile adds what makes object storage hard: first-byte latency, bandwidth caps,",
                "and 503 SlowDown beyond a per-prefix request rate."})
final class StoreCommand implements Callable<Integer> {
    @Option(names = "--root", required = true, paramLabel = "DIR", description = "Directory to serve (must exist unless --create).")
    Path root;

    @Option(names = "--create", description = "Create the --root directory if it is missing.")
    boolean create;

    @Option(names = "--port", defaultValue = "9000", paramLabel = "N", description = "Port (default: ${DEFAULT-VALUE}; 0 picks one).")
    int port;

    @Option(names = "--bind", defaultValue = "127.0.0.1", paramLabel = "ADDR",
            description = "Address to listen on (default: ${DEFAULT-VALUE}); it accepts any credentials, so bind beyond loopback only on a test network.")
    String bind;

    @Option(names = "--profile", defaultValue = "cloud", paramLabel = "cloud|none",
            description = "cloud: behave like object storage; none: as fast as the machine allows (default: ${DEFAULT-VALUE}).")
    String profile;

    @Option(names = "--latency-ms", paramLabel = "MS", description = "First-byte latency (cloud default: 30).")
    Long latencyMs;

    @Option(names = "--connection-mibps", paramLabel = "MIB_S", description = "Per-connection bandwidth cap, MiB/s, 0 = none (cloud default: 64).")
    Long connectionMibps;

    @Option(names = "--aggregate-mibps", paramLabel = "MIB_S", description = "Aggregate bandwidth cap, MiB/s, 0 = none (cloud default: 400).")
    Long aggregateMibps;

    @Option(names = "--prefix-rps", paramLabel = "N", description = "Requests/s per prefix before 503 SlowDown, 0 = none (cloud default: 5500).")
    Double prefixRps;

    @Override
    public Integer call() throws Exception {
        CloudProfile p = profile();
        Folders.requireOrCreate(root, "--root", create);
        try (EmbeddedStore store = EmbeddedStore.start(root, bind, port, p, Clock.system())) {
            System.out.println("ferry store: serving " + store.root() + " at " + store.endpoint() + " (profile " + p.describe() + ")");
            System.out.println("try: aws --endpoint-url " + store.endpoint() + " s3 ls    (any credentials work; Ctrl-C stops)");
            CountDownLatch stop = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
            stop.await();
        }
        return 0;
    }

    CloudProfile profile() {
        CloudProfile p;
        try {
            p = CloudProfile.named(profile);
        } catch (IllegalArgumentException e) {
            throw new UserError("--profile: " + e.getMessage());
        }
        if (latencyMs != null) {
            p = p.withFirstByteLatency(Duration.ofMillis(nonNegative("--latency-ms", latencyMs)));
        }
        if (connectionMibps != null) {
            p = p.withConnectionBandwidth(nonNegative("--connection-mibps", connectionMibps) << 20);
        }
        if (aggregateMibps != null) {
            p = p.withAggregateBandwidth(nonNegative("--aggregate-mibps", aggregateMibps) << 20);
        }
        if (prefixRps != null) {
            if (prefixRps < 0) {
                throw new UserError("--prefix-rps must not be negative: " + prefixRps);
            }
            p = p.withPrefixRequestRate(prefixRps);
        }
        return p;
    }

    private static long nonNegative(String option, long value) {
        if (value < 0) {
            throw new UserError(option + " must not be negative: " + value);
        }
        return value;
    }
}
