package dev.ferry.serve.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The forms of --group, read and written back, and one sentence for each mistake. */
class GroupSpecTest {
    @Test
    void eachForm_isReadAndWrittenBack() {
        assertThat(GroupSpec.parse("")).isNull();
        assertThat(GroupSpec.parse(" http://10.0.0.1:9099, http://10.0.0.2:9099 ")).isEqualTo(new GroupSpec.Static(
                List.of(URI.create("http://10.0.0.1:9099"), URI.create("http://10.0.0.2:9099"))));
        assertThat(GroupSpec.parse("dns:ferry-peers.ml.svc.cluster.local:9099"))
                .isEqualTo(new GroupSpec.Dns("ferry-peers.ml.svc.cluster.local", 9099, null));
        assertThat(GroupSpec.parse("dns://10.96.0.10:53/ferry-peers:9099")).isEqualTo(new GroupSpec.Dns("ferry-peers", 9099, "10.96.0.10:53"));
        assertThat(GroupSpec.parse("etcd:http://etcd.infra:2379/ferry/train"))
                .isEqualTo(new GroupSpec.Etcd(URI.create("http://etcd.infra:2379"), "/ferry/train/"));
        for (String text : List.of("http://a:1,http://b:2", "dns:ferry:9099", "dns://127.0.0.1:5353/ferry:9099",
                "etcd:http://etcd:2379/ferry/")) {
            assertThat(GroupSpec.parse(GroupSpec.parse(text).text())).as(text).isEqualTo(GroupSpec.parse(text));
        }
    }

    @Test
    void mistakes_areOneSentenceNamingTheForm() {
        assertThatThrownBy(() -> GroupSpec.parse("dns:ferry")).hasMessageContaining("dns:NAME:PORT");
        assertThatThrownBy(() -> GroupSpec.parse("dns:ferry:99999")).hasMessageContaining("1 to 65535");
        assertThatThrownBy(() -> GroupSpec.parse("dns:bad name:9099")).hasMessageContaining("not a DNS name");
        assertThatThrownBy(() -> GroupSpec.parse("etcd:http://etcd:2379")).hasMessageContaining("needs a key prefix");
        assertThatThrownBy(() -> GroupSpec.parse("etcd:etcd:2379/ferry")).hasMessageContaining("etcd:http://HOST:2379/PREFIX");
        assertThatThrownBy(() -> GroupSpec.parse("10.0.0.1:9099")).hasMessageContaining("http:// or https://")
                .hasMessageContaining("dns:NAME:PORT");
        assertThatThrownBy(() -> GroupSpec.parse("http://a:1,http://a:1")).hasMessageContaining("twice");
    }

    @Test
    void membersSortByAddress_ipv4First_thenNames() {
        assertThat(Urls.sorted(List.of(URI.create("http://10.0.0.10:9099"), URI.create("http://[fd00::1]:9099"),
                URI.create("http://node-b:9099"), URI.create("http://10.0.0.9:9099"), URI.create("http://10.0.0.9:9099"))))
                .containsExactly(URI.create("http://10.0.0.9:9099"), URI.create("http://10.0.0.10:9099"), URI.create("http://[fd00::1]:9099"),
                        URI.create("http://node-b:9099"));
    }
}
