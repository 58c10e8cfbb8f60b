package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.loader.Decoder;
import dev.ferry.loader.LoaderConfig;
import dev.ferry.loader.SyntheticDataset;
import dev.ferry.metrics.Advisor;
import dev.ferry.metrics.RunReport;
import dev.ferry.metrics.TrainingRun;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.StoreChain;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The advisor's rules about the object store, on real runs against the embedded store over real sockets:
 * a per-prefix limit that throttles, and first-byte latency with too few reads in flight.
 */
class AdvisorStoreRulesTest {
    @TempDir
    Path tmp;

    RunReport run(CloudProfile profile, LoaderConfig loader, Duration step) throws Exception {
        // the data set is written through a server with no limit over the same folder, so that the run, and it alone,
        // meets the profile's limits: a full prefix budget and a governor that has learnt nothing yet
        Path root = tmp.resolve("store-" + System.nanoTime());
        Manifest manifest;
        try (EmbeddedStore writer = EmbeddedStore.start(root, 0, CloudProfile.none());
                S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(writer.endpoint(), "k", "s"))) {
            s3.createBucket("data");
            manifest = SyntheticDataset.write(s3, "data", "train", 4, 20, 4000, 3);
        }
        try (EmbeddedStore server = EmbeddedStore.start(root, 0, profile);
                StoreChain chain = StoreChain.over(new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "k", "s")),
                        ChainConfig.DEFAULT)) {
            Advisor.Context context = new Advisor.Context(manifest.totalBytes(), 0, loader.decodeWorkers(), loader.fetchConcurrency(), 1,
                    0.09 / 1e9, c -> 0);
            return TrainingRun.run(new TrainingRun.Setup(chain, chain.meter(), null, manifest, PlanConfig.DEFAULT, loader,
                    Decoder.identity(), 1, step, null, context, null, null), null);
        }
    }

    static boolean has(RunReport r, String words) {
        return r.advice().stream().anyMatch(a -> a.contains(words));
    }

    @Test
    void throttling_isReported_whenAPrefixIsOverItsLimit() throws Exception {
        CloudProfile limited = CloudProfile.none().withPrefixRequestRate(30);
        RunReport throttled = run(limited, LoaderConfig.DEFAULT.withBatchSize(8), Duration.ZERO);
        assertThat(throttled.epochs().get(0).throttled()).isPositive();
        assertThat(has(throttled, "The object store is throttling")).as(throttled.advice().toString()).isTrue();

        RunReport free = run(CloudProfile.none(), LoaderConfig.DEFAULT.withBatchSize(8), Duration.ZERO);
        assertThat(has(free, "throttling")).as(free.advice().toString()).isFalse();
    }

    @Test
    void waitingOnTheStore_isReported_whenFewReadsAreInFlight() throws Exception {
        CloudProfile slow = CloudProfile.none().withFirstByteLatency(Duration.ofMillis(40));
        RunReport starved = run(slow, new LoaderConfig(8, 1, 1, 8, false), Duration.ZERO);
        assertThat(has(starved, "The consumer waits on the object store")).as(starved.advice().toString()).isTrue();

        RunReport fed = run(slow, LoaderConfig.DEFAULT.withBatchSize(8).withFetchConcurrency(32), Duration.ofMillis(150));
        assertThat(has(fed, "waits on the object store")).as(fed.advice().toString()).isFalse();
    }
}
