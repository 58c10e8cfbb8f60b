package dev.ferry.serve.membership;

import dev.ferry.time.Await;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A real dnsmasq and a real etcd on loopback ports for the membership tests (Debian's dnsmasq-base and
 * etcd-server; scripts/test installs them). Missing, a test is skipped, or fails under FERRY_REQUIRE_REAL_CLIENTS=1.
 */
final class RealServers {
    private RealServers() {
    }

    static Path require(String tool, String pkg) {
        for (String dir : List.of("/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin")) {
            Path p = Path.of(dir, tool);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        String reason = tool + " is not installed here; scripts/test installs " + pkg;
        if ("1".equals(System.getenv("FERRY_REQUIRE_REAL_CLIENTS"))) {
            throw new AssertionError(reason);
        }
        System.out.println("SKIPPED: " + reason);
        Assumptions.abort(reason);
        return null;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** dnsmasq answering from one hosts file on 127.0.0.1 (UDP and TCP on {@code port}); SIGHUP rereads the file. */
    record Dnsmasq(Process process, int port, Path hosts) implements AutoCloseable {
        static Dnsmasq start(Path dir, String hostsText) throws IOException, InterruptedException {
            Path bin = require("dnsmasq", "dnsmasq-base");
            Path hosts = dir.resolve("hosts");
            Files.writeString(hosts, hostsText);
            int port = freePort();
            Process p = new ProcessBuilder(bin.toString(), "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
                    "--addn-hosts=" + hosts, "--listen-address=127.0.0.1", "--bind-interfaces", "--port=" + port, "--local-ttl=1",
                    "--pid-file=", "--user=root", "--log-facility=-").redirectErrorStream(true).redirectOutput(dir.resolve("dnsmasq.log").toFile())
                    .start();
            waitForTcp(port, p, dir.resolve("dnsmasq.log"));
            return new Dnsmasq(p, port, hosts);
        }

        /** Replaces the records and has dnsmasq read them again. */
        void records(String hostsText) throws IOException, InterruptedException {
            Files.writeString(hosts, hostsText);
            new ProcessBuilder("kill", "-HUP", Long.toString(process.pid())).start().waitFor();
        }

        String server() {
            return "127.0.0.1:" + port;
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            process.waitFor(5, TimeUnit.SECONDS);
        }
    }

    /** A one-node etcd with its data in {@code dir}, clients on {@link #endpoint()}. */
    record Etcd(Process process, URI endpoint) implements AutoCloseable {
        static Etcd start(Path dir) throws IOException, InterruptedException {
            Path bin = require("etcd", "etcd-server");
            int client = freePort();
            int peer = freePort();
            String c = "http://127.0.0.1:" + client;
            String p = "http://127.0.0.1:" + peer;
            Process process = new ProcessBuilder(bin.toString(), "--name", "t", "--data-dir", dir.resolve("etcd").toString(),
                    "--listen-client-urls", c, "--advertise-client-urls", c, "--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
                    "--initial-cluster", "t=" + p).redirectErrorStream(true).redirectOutput(dir.resolve("etcd.log").toFile()).start();
            waitForTcp(client, process, dir.resolve("etcd.log"));
            return new Etcd(process, URI.create(c));
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            process.waitFor(5, TimeUnit.SECONDS);
        }
    }

    static void waitForTcp(int port, Process p, Path log) throws IOException, InterruptedException {
        try {
            Await.listening(port, p, Duration.ofSeconds(20));
        } catch (AssertionError e) {
            p.destroyForcibly();
            throw new IOException(e.getMessage() + "; its log: " + Files.readString(log), e);
        }
    }
}
