package dev.ferry.serve.membership;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.time.Await;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A dns: group follows a real dnsmasq's records of one name, as a headless Service's change: no restart, no JVM cache. */
class DnsMembershipTest {
    static String records(String... addresses) {
        StringBuilder b = new StringBuilder();
        for (String a : addresses) {
            b.append(a).append(" ferry.test.svc\n");
        }
        return b.toString();
    }

    static void await(List<List<URI>> seen, List<URI> expected) throws InterruptedException {
        Await.until("the members " + expected + " (seen: " + seen + ")", Duration.ofSeconds(30),
                () -> !seen.isEmpty() && seen.getLast().equals(expected));
    }

    @Test
    void theMembersAreTheSortedAddresses_andFollowTheRecords(@TempDir Path dir) throws Exception {
        try (RealServers.Dnsmasq dns = RealServers.Dnsmasq.start(dir, records("10.213.0.12", "10.213.0.9", "10.213.0.11", "fd00::5"))) {
            GroupSpec spec = GroupSpec.parse("dns://" + dns.server() + "/ferry.test.svc:9099");
            List<List<URI>> seen = new CopyOnWriteArrayList<>();
            try (Membership m = Membership.of(spec, Duration.ofMillis(200))) {
                m.start(null, seen::add);
                assertThat(seen).as("the first list comes before start returns").isNotEmpty();
                assertThat(seen.getFirst()).containsExactly(URI.create("http://10.213.0.9:9099"), URI.create("http://10.213.0.11:9099"),
                        URI.create("http://10.213.0.12:9099"), URI.create("http://[fd00:0:0:0:0:0:0:5]:9099"));
                assertThat(m.source()).isEqualTo("dns://" + dns.server() + "/ferry.test.svc:9099");

                dns.records(records("10.213.0.12", "10.213.0.9", "10.213.0.11", "10.213.0.13"));
                await(seen, List.of(URI.create("http://10.213.0.9:9099"), URI.create("http://10.213.0.11:9099"),
                        URI.create("http://10.213.0.12:9099"), URI.create("http://10.213.0.13:9099")));
                int changes = seen.size();

                dns.close(); // the DNS server goes away: the group keeps its last members
                Await.until("a lookup that finds no server", Duration.ofSeconds(30), ((DnsMembership) m)::failing);
                assertThat(seen).hasSize(changes);
            }
        }
    }

    @Test
    void aNameWithNoRecords_isAnEmptyGroup_untilItHasSome(@TempDir Path dir) throws Exception {
        try (RealServers.Dnsmasq dns = RealServers.Dnsmasq.start(dir, "10.213.0.1 other.name\n")) {
            List<List<URI>> seen = new CopyOnWriteArrayList<>();
            try (Membership m = Membership.of(GroupSpec.parse("dns://" + dns.server() + "/ferry.test.svc:9099"), Duration.ofMillis(200))) {
                m.start(null, seen::add);
                assertThat(seen).containsExactly(List.of());
                dns.records(records("10.213.0.7"));
                await(seen, List.of(URI.create("http://10.213.0.7:9099")));
            }
        }
    }
}
