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

/** An etcd: group over a real etcd: each member registers itself on a lease and sees the others come and go. */
class EtcdMembershipTest {
    static void await(List<List<URI>> seen, List<URI> expected, Duration within) throws InterruptedException {
        Await.until("the members " + expected, within, () -> !seen.isEmpty() && seen.getLast().equals(expected));
    }

    @Test
    void membersRegisterThemselves_andOneThatCloses_leavesAtOnce(@TempDir Path dir) throws Exception {
        try (RealServers.Etcd etcd = RealServers.Etcd.start(dir)) {
            GroupSpec spec = GroupSpec.parse("etcd:" + etcd.endpoint() + "/ferry/test");
            URI a = URI.create("http://10.213.0.11:9099");
            URI b = URI.create("http://10.213.0.2:9099");
            List<List<URI>> seenByA = new CopyOnWriteArrayList<>();
            List<List<URI>> seenByB = new CopyOnWriteArrayList<>();
            try (Membership ma = Membership.of(spec, Duration.ofMillis(500))) {
                ma.start(a, seenByA::add);
                assertThat(seenByA.getLast()).containsExactly(a);
                assertThat(ma.source()).isEqualTo("etcd:" + etcd.endpoint() + "/ferry/test/");
                try (Membership mb = Membership.of(spec, Duration.ofMillis(500))) {
                    mb.start(b, seenByB::add);
                    assertThat(seenByB.getLast()).as("sorted by address").containsExactly(b, a);
                    await(seenByA, List.of(b, a), Duration.ofSeconds(1));
                }
                long closed = System.nanoTime();
                await(seenByA, List.of(a), Duration.ofSeconds(1)); // revoked on close: the watch sees it go
                System.out.printf("etcd: a member that closed left the others' list in %.0f ms%n", (System.nanoTime() - closed) / 1e6);
            }
        }
    }
}
