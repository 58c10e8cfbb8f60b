package dev.ferry.cli.bench;

import dev.ferry.cli.errors.UserError;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.Uploads;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.StoreChain;
import dev.ferry.time.Clock;
import dev.ferry.util.Sizes;
import dev.ferry.writeback.FlushResult;
import dev.ferry.writeback.WriteBackConfig;
import dev.ferry.writeback.WriteBackStore;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ferry bench writeback}: a checkpoint written straight to the object store (multipart, 4 parts in
 * flight, through the standard chain) vs through write-back (acknowledged once on local disk, then uploaded
 * the same way): the time the writer waits, and the time until the checkpoint is durable.
 */
@Command(name = "writeback", mixinStandardHelpOptions = true,
        description = "Checkpoint write latency: a direct multipart upload vs write-back (acknowledged locally), and time until durable.")
final class WriteBackBench implements Callable<Integer> {
    @Option(names = "--size-mib", defaultValue = "1024", description = "Checkpoint size in MiB (default: ${DEFAULT-VALUE}).")
    int sizeMib;

    @Option(names = "--rounds", defaultValue = "2", description = "Rounds of each, alternating (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--work-dir", description = "Where the store and the write-back folder live (default: a temporary folder, removed after).")
    Path workDir;

    /** Times the runs: a command is where the real clock enters. */
    private final Clock clock = Clock.system();

    @Override
    public Integer call() throws Exception {
        if (sizeMib < 1 || rounds < 1) {
            throw new UserError("--size-mib and --rounds must be positive");
        }
        long size = (long) sizeMib << 20;
        try (WorkDir workDirectory = WorkDir.of(workDir, "ferry-wb-")) {
            Path work = workDirectory.path();
            Path checkpoint = work.resolve("checkpoint.bin");
            try (OutputStream out = Files.newOutputStream(checkpoint)) {
                byte[] block = new byte[1 << 20];
                Random random = new Random(1);
                for (long w = 0; w < size; w += block.length) {
                    random.nextBytes(block);
                    out.write(block);
                }
            }
            CloudProfile profile = CloudProfile.cloud();
            System.out.println("machine: " + Machine.describe());
            try (EmbeddedStore server = EmbeddedStore.start(work.resolve("store"), 0, profile);
                    StoreChain chain = StoreChain.over(new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "b", "b")),
                            ChainConfig.DEFAULT)) {
                System.out.println("store:   " + server.endpoint() + " (" + profile.describe() + ")");
                System.out.printf(Locale.ROOT, "checkpoint: %s, 8 MiB parts, 4 in flight%n", Sizes.format(size));
                chain.createBucket("ckpt");
                for (int round = 1; round <= rounds; round++) {
                    long t0 = clock.nanoTime();
                    Uploads.putFile(chain, ObjectKey.of("ckpt", "direct-" + round), checkpoint, size, 8L << 20, 4);
                    double direct = (clock.nanoTime() - t0) / 1e9;

                    Path wbDir = work.resolve("wb-" + round);
                    double ack;
                    double durable;
                    // the write-back store closes what it wraps; the chain is shared across rounds
                    ObjectStore shared = new ForwardingObjectStore(chain) {
                        @Override
                        public void close() {
                        }
                    };
                    try (WriteBackStore wb = new WriteBackStore(shared, WriteBackConfig.of(wbDir, size * 2))) {
                        long t1 = clock.nanoTime();
                        wb.write(ObjectKey.of("ckpt", "writeback-" + round), PutBody.ofFile(checkpoint));
                        ack = (clock.nanoTime() - t1) / 1e9;
                        FlushResult r = wb.flush(Duration.ofMinutes(10));
                        durable = (clock.nanoTime() - t1) / 1e9;
                        if (!r.complete()) {
                            throw new IllegalStateException("the checkpoint did not become durable: " + r.firstError());
                        }
                    }
                    WorkDir.deleteTree(wbDir);
                    System.out.printf(Locale.ROOT, "round %d  direct upload %6.2f s   write-back: acknowledged %6.2f s, durable %6.2f s"
                            + "   (the writer waits %.0f%% as long)%n", round, direct, ack, durable, 100 * ack / direct);
                }
            }
        }
        return 0;
    }
}
