package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.CacheConfig;
import dev.ferry.cache.CachingStore;
import dev.ferry.metrics.FerryMetrics;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.Prices;
import dev.ferry.store.PutBody;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.store.file.FileObjectStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The four numbers on /metrics, scraped over a real socket, after real reads through the local tier. */
class MetricsServerTest {
    @TempDir
    Path tmp;

    @Test
    void metricsEndpoint_showsTheFourNumbers() throws Exception {
        FileObjectStore origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        ObjectKey key = ObjectKey.of("data", "obj");
        origin.put(key, PutBody.ofBytes(new byte[300_000]));
        MeteredStore meter = new MeteredStore(origin, Prices.AWS_S3_STANDARD);
        try (MetricsServer server = new MetricsServer(0);
                CachingStore cache = new CachingStore(meter, CacheConfig.of(tmp.resolve("cache"), 1 << 20).withBlockSize(64 * 1024))) {
            FerryMetrics metrics = FerryMetrics.bind(server.registry(), meter, cache);
            cache.readBytes(key, null);
            cache.readBytes(key, null);
            metrics.step(2, 32, 5_000_000);
            metrics.step(2, 32, 7_000_000);
            HttpResponse<String> r = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            String body = r.body();
            assertThat(body).contains("ferry_loader_samples_total 64.0")
                    .contains("ferry_loader_wait_seconds{quantile=\"0.5\"}")
                    .contains("ferry_loader_wait_seconds_count 2")
                    .contains("ferry_loader_epoch 2.0")
                    .contains("ferry_cache_requests_total{result=\"hit\"} 5.0")
                    .contains("ferry_cache_requests_total{result=\"miss\"} 5.0")
                    .contains("ferry_cache_bytes_total{source=\"upstream\"} 300000.0")
                    .contains("ferry_cache_resident_bytes 300000.0")
                    .contains("ferry_egress_bytes_total 300000.0")
                    .contains("ferry_egress_requests_total{op=\"get\"} 1.0")
                    .contains("ferry_egress_requests_total{op=\"head\"} 0.0") // a miss is one GET, no HEAD before it
                    .contains("ferry_egress_cost_usd_total");
        }
    }
}
