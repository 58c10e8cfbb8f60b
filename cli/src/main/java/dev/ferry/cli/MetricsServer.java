package dev.ferry.cli;

import com.sun.net.httpserver.HttpServer;
import dev.ferry.cli.errors.UserError;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * {@code /metrics} for Prometheus on 127.0.0.1, served by the JDK's own HTTP server while a command runs
 * (the daemon will serve it on its own port). Thread-safe.
 */
final class MetricsServer implements AutoCloseable {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final HttpServer server;

    MetricsServer(int port) throws IOException {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        } catch (IOException e) {
            throw new UserError("--metrics-port: cannot listen on 127.0.0.1:" + port + " (" + e.getMessage() + ")", 1);
        }
        server.createContext("/metrics", exchange -> {
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
    }

    PrometheusMeterRegistry registry() {
        return registry;
    }

    int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        registry.close();
    }
}
