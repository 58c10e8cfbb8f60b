package dev.ferry.serve.jobs;

import dev.ferry.serve.protocol.Reply;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;

/** {@code GET /_ferry/metrics}: the node's meters in Prometheus' text format, for a scraper. Thread-safe. */
final class MetricsApi {
    static final String PATH = "/_ferry/metrics";

    private final PrometheusMeterRegistry registry;

    MetricsApi(PrometheusMeterRegistry registry) {
        this.registry = registry;
    }

    Reply scrape() {
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        return new Reply.Full(HttpResponseStatus.OK, h, registry.scrape().getBytes(StandardCharsets.UTF_8), false);
    }
}
