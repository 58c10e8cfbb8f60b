package dev.ferry.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CachingStore;
import dev.ferry.loader.Decoder;
import dev.ferry.loader.LoaderConfig;
import dev.ferry.loader.Sample;
import dev.ferry.loader.SyntheticDataset;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.store.Prices;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each rule of the advisor, against a real run (loader, local tier, directory origin) that produces its
 * situation, and against one that does not.
 */
class AdvisorTest {
    @TempDir
    Path tmp;
    FileObjectStore origin;
    Manifest manifest;

    @BeforeEach
    void setUp() throws IOException {
        origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        manifest = SyntheticDataset.write(origin, "data", "train", 8, 12, 8000, 1);
    }

    RunReport run(long cacheBytes, String policy, Decoder<Sample> decoder, LoaderConfig loader, Duration step, int epochs) throws Exception {
        MeteredStore meter = new MeteredStore(origin, Prices.AWS_S3_STANDARD);
        try (CachingStore cache = new CachingStore(meter, CacheConfig.of(tmp.resolve("cache-" + System.nanoTime()), cacheBytes)
                .withBlockSize(16 * 1024).withPolicy(policy))) {
            Advisor.Context context = new Advisor.Context(manifest.totalBytes(), cacheBytes, loader.decodeWorkers(),
                    loader.fetchConcurrency(), epochs, 0.09 / 1e9, capacity -> capacity >= manifest.totalBytes() ? 0 : manifest.totalBytes());
            return TrainingRun.run(new TrainingRun.Setup(cache, meter, cache, manifest, PlanConfig.DEFAULT, loader, decoder, epochs,
                    step, null, context, null, null), null);
        }
    }

    static Decoder<Sample> slow(long millis) {
        return s -> {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return s;
        };
    }

    static boolean has(RunReport r, String words) {
        return r.advice().stream().anyMatch(a -> a.contains(words));
    }

    @Test
    void cpuBound_whenDataIsLocalButDecodingCannotKeepUp() throws Exception {
        // read-ahead of one batch: decodes complete in any order on the worker, so a deeper window can hold the first
        // batch back until the whole window is decoded, and the waits bunch into one step (p50 near 0)
        RunReport slow = run(manifest.totalBytes() * 2, "lru", slow(8), new LoaderConfig(8, 1, 8, 8, false), Duration.ZERO, 2);
        assertThat(slow.epochs().get(1).localHitRate()).isEqualTo(1.0);
        assertThat(has(slow, "Preprocessing is CPU-bound")).as(slow.advice() + " " + slow.toJson()).isTrue();

        // a 20 ms step: the loader's work for a batch of local samples is far less, even on a machine other work
        // shares (CI's); with 3 ms, a busy machine's scheduling delays alone were a tenth of the epoch, and the advice
        // (rightly, for that machine) said CPU-bound
        RunReport fine = run(manifest.totalBytes() * 2, "lru", Decoder.identity(), new LoaderConfig(8, 2, 8, 64, true),
                Duration.ofMillis(20), 2);
        assertThat(has(fine, "CPU-bound")).as(fine.advice().toString()).isFalse();
    }

    @Test
    void workingSetOutgrewTheNode_whenTheCacheIsTooSmall() throws Exception {
        RunReport small = run(manifest.totalBytes() / 10, "lru", Decoder.identity(), LoaderConfig.DEFAULT.withBatchSize(8), Duration.ZERO, 2);
        assertThat(has(small, "The working set outgrew the node")).as(small.advice().toString()).isTrue();
        assertThat(has(small, "A cache of")).isTrue();

        RunReport big = run(manifest.totalBytes() * 2, "lru", Decoder.identity(), LoaderConfig.DEFAULT.withBatchSize(8), Duration.ZERO, 2);
        assertThat(big.epochs().get(1).egressBytes()).isZero();
        assertThat(has(big, "outgrew")).as(big.advice().toString()).isFalse();
    }

    @Test
    void projectedEgress_isAlwaysReported_andTheReportIsJson() throws Exception {
        RunReport r = run(manifest.totalBytes() * 2, "lru", Decoder.identity(), LoaderConfig.DEFAULT.withBatchSize(8), Duration.ZERO, 2);
        assertThat(has(r, "Projected egress for 2 epochs")).isTrue();
        String json = r.toJson();
        assertThat(json).startsWith("{\"epochs\":[{\"epoch\":1,\"samples\":").contains("\"wait_per_step_ms_p50\":")
                .contains("\"local_hit_rate_bytes\":").contains("\"egress_cost_usd\":").contains("\"predicted_egress_bytes\":-1")
                .contains("\"advice\":[\"");
        assertThat(r.epochs()).extracting(EpochReport::samples).containsOnly((long) manifest.totalSamples());
        assertThat(List.of(r.epochs().get(0).egressBytes())).allMatch(b -> b >= manifest.totalBytes() * 0.9);
    }
}
