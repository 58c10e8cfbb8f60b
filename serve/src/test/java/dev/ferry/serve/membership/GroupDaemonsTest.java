package dev.ferry.serve.membership;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.serve.Daemon;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.time.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real daemons in a group whose membership comes from each source, on loopback: each finds itself without
 * {@code --self}, the status shows the group, a member that dies is marked down (how soon is printed: well
 * under 2 s on a quiet machine) and reads of its objects go on, and members join and leave with no restart.
 */
class GroupDaemonsTest {
    /**
     * How long a change may take to show before the test fails: a bound that tells "never" from "late" on a
     * loaded machine, not the speed, which each wait prints.
     */
    static final Duration PATIENCE = Duration.ofSeconds(30);
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    Path store() throws Exception {
        Path root = dir.resolve("store");
        Files.createDirectories(root.resolve("data"));
        for (int i = 0; i < 100; i++) {
            Files.writeString(root.resolve("data/obj-" + i), "object " + i + " ".repeat(1000));
        }
        return root;
    }

    Daemon start(int i, Map<String, String> settings) throws Exception {
        return DaemonFixture.overFolder(dir).with("cache-dir", dir.resolve("cache-" + i)).with("cache-size", "64MiB")
                .with("prefetch-bytes", 0).with("group-refresh", "200ms").with(settings).start().daemon;
    }

    static JsonNode group(Daemon d) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(d.endpoint().resolve("/_ferry/v1/status")).build(),
                HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body()).path("group");
    }

    static List<String> urls(JsonNode group, String state) {
        List<String> out = new ArrayList<>();
        group.path("members").forEach(m -> {
            if (state == null || m.path("state").asText().equals(state)) {
                out.add(m.path("url").asText());
            }
        });
        return out;
    }

    /** Waits (at most {@code within}) until {@code d}'s group satisfies {@code test}; the time it took. */
    static Duration await(Daemon d, Predicate<JsonNode> test, Duration within) throws Exception {
        try {
            return Await.until(d.endpoint() + "'s group", within, () -> test.test(group(d)));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; it lists " + group(d), e);
        }
    }

    static void readAll(Daemon d) throws Exception {
        for (int i = 0; i < 100; i++) {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(d.endpoint().resolve("/data/obj-" + i)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as("GET obj-%d through %s", i, d.endpoint()).isEqualTo(200);
            assertThat(r.body()).startsWith("object " + i + " ");
        }
    }

    @Test
    void aStaticGroup_findsItselfWithoutSelf_andAMemberThatDies_isDownWithinTwoSeconds_withNoFailedRead() throws Exception {
        store();
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ports.add(RealServers.freePort());
        }
        String group = String.join(",", ports.stream().map(p -> "http://127.0.0.1:" + p).toList());
        List<Daemon> daemons = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                daemons.add(start(i, Map.of("group", group, "port", Integer.toString(ports.get(i)))));
            }
            for (int i = 0; i < 3; i++) {
                Daemon d = daemons.get(i);
                await(d, g -> urls(g, "up").size() == 3, PATIENCE);
                JsonNode g = group(d);
                assertThat(g.path("source").asText()).isEqualTo("static");
                assertThat(g.path("self").asText()).isEqualTo("http://127.0.0.1:" + ports.get(i));
                assertThat(urls(g, null)).containsExactly(group.split(","));
            }
            readAll(daemons.get(0));
            long changes = group(daemons.get(0)).path("changes").asLong();
            daemons.get(2).close();
            String dead = "http://127.0.0.1:" + ports.get(2);
            for (int i = 0; i < 2; i++) {
                Duration t = await(daemons.get(i), g -> urls(g, "down").equals(List.of(dead)), PATIENCE);
                System.out.printf("static group: member %d saw the closed member down after %d ms%n", i, t.toMillis());
            }
            assertThat(group(daemons.get(0)).path("changes").asLong()).isEqualTo(changes + 1);
            readAll(daemons.get(0)); // its objects go to the next owner in their ranking
            readAll(daemons.get(1));
        } finally {
            daemons.forEach(Daemon::close);
        }
    }

    @Test
    void aMemberThatAcceptsConnectionsButNeverAnswers_isSkippedAfterTwoUnansweredProbes() throws Exception {
        store();
        try (java.net.ServerSocket hung = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            List<java.net.Socket> held = java.util.Collections.synchronizedList(new ArrayList<>());
            Thread acceptor = Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (true) {
                        held.add(hung.accept()); // accepted, never answered: a daemon that hangs
                    }
                } catch (java.io.IOException e) {
                    // closed
                }
            });
            int port = RealServers.freePort();
            String silent = "http://127.0.0.1:" + hung.getLocalPort();
            String group = "http://127.0.0.1:" + port + "," + silent;
            long start = System.nanoTime();
            try (Daemon d = start(0, Map.of("group", group, "port", Integer.toString(port)))) {
                Duration t = await(d, g -> urls(g, "down").equals(List.of(silent)), PATIENCE);
                long millis = Duration.ofNanos(System.nanoTime() - start).toMillis();
                System.out.printf("a member that never answers was marked down %d ms after the daemon started (seen %d ms into polling)%n",
                        millis, t.toMillis());
                readAll(d); // its objects come from the origin: no read waits on it
            } finally {
                acceptor.interrupt();
                held.forEach(s -> {
                    try {
                        s.close();
                    } catch (java.io.IOException ignored) {
                        // closing
                    }
                });
            }
        }
    }

    @Test
    void aDnsGroup_followsTheRecords_aMemberJoinsWithNoRestart() throws Exception {
        store();
        int port = RealServers.freePort();
        try (RealServers.Dnsmasq dns = RealServers.Dnsmasq.start(dir, "127.0.0.2 ferry.test\n127.0.0.3 ferry.test\n")) {
            String spec = "dns://" + dns.server() + "/ferry.test:" + port;
            List<Daemon> daemons = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    daemons.add(start(i, Map.of("group", spec, "bind", "127.0.0." + (i + 2), "port", Integer.toString(port))));
                }
                for (int i = 0; i < 2; i++) {
                    await(daemons.get(i), g -> urls(g, "up").size() == 2, PATIENCE);
                    assertThat(group(daemons.get(i)).path("self").asText()).isEqualTo("http://127.0.0." + (i + 2) + ":" + port);
                    assertThat(group(daemons.get(i)).path("source").asText()).isEqualTo(spec);
                }
                daemons.add(start(2, Map.of("group", spec, "bind", "127.0.0.4", "port", Integer.toString(port))));
                dns.records("127.0.0.2 ferry.test\n127.0.0.3 ferry.test\n127.0.0.4 ferry.test\n"); // the new pod is ready
                for (Daemon d : daemons) {
                    await(d, g -> urls(g, "up").size() == 3, PATIENCE);
                }
                readAll(daemons.get(0));
            } finally {
                daemons.forEach(Daemon::close);
            }
        }
    }

    @Test
    void anEtcdGroup_membersRegisterThemselves_andOneThatStops_leaves() throws Exception {
        store();
        try (RealServers.Etcd etcd = RealServers.Etcd.start(dir)) {
            String spec = "etcd:" + etcd.endpoint() + "/ferry/test";
            List<Daemon> daemons = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    daemons.add(start(i, Map.of("group", spec, "port", "0")));
                }
                for (Daemon d : daemons) {
                    await(d, g -> urls(g, "up").size() == 3, PATIENCE);
                    assertThat(group(d).path("self").asText()).isEqualTo("http://127.0.0.1:" + d.port());
                }
                readAll(daemons.get(1));
                String leaving = "http://127.0.0.1:" + daemons.get(2).port();
                daemons.remove(2).close();
                for (Daemon d : daemons) {
                    Duration t = await(d, g -> urls(g, null).size() == 2 && !urls(g, null).contains(leaving), PATIENCE);
                    System.out.printf("etcd group: a member that stopped left the list in %d ms%n", t.toMillis());
                }
                readAll(daemons.get(0));
            } finally {
                daemons.forEach(Daemon::close);
            }
        }
    }
}
