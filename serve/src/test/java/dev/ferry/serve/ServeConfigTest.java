package dev.ferry.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The daemon's settings: documented defaults, one key per flag in the YAML file, and the bind-address rule. */
class ServeConfigTest {
    @Test
    void defaultsAreTheDocumentedOnes() {
        Map<String, String> d = ServeConfig.defaults().describe();
        assertThat(d).containsEntry("bind", "127.0.0.1").containsEntry("port", "9099").containsEntry("upstream", "")
                .containsEntry("store-root", "").containsEntry("profile", "cloud").containsEntry("cache-size", "10.0 GiB")
                .containsEntry("block-size", "4.0 MiB").containsEntry("verify", "on-load").containsEntry("prefetch-bytes", "256.0 MiB").containsEntry("insecure", "false")
                .containsEntry("write-back", "false").containsEntry("write-back-quota", "8.0 GiB").containsEntry("max-header-bytes", "16384")
                .containsEntry("max-xml-bytes", "1.0 MiB").containsEntry("max-object-bytes", "5.0 GiB").containsEntry("group", "")
                .containsEntry("self", "").containsEntry("shared-tier", "").containsEntry("first-byte-timeout", "10s")
                .containsEntry("metadata-ttl", "60s")
                .containsEntry("header-timeout", "30s").containsEntry("multipart-ttl", "7d")
                .containsEntry("virtual-host", "localhost")
                .containsEntry("eviction-follows", "all-jobs").containsEntry("scratch-bucket", "").containsEntry("scratch-quota", "10.0 GiB")
                .containsEntry("scratch-ttl", "1d");
        assertThat(d.get("cache-dir")).endsWith(".ferry/cache");
        assertThat(d.get("data-dir")).endsWith(".ferry/data");
        assertThat(d.keySet()).containsExactlyInAnyOrderElementsOf(ServeConfig.KEYS);
    }

    @Test
    void aYamlFileUsesTheFlagsNames(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ferry.yaml");
        Files.writeString(file, "cache-size: 500GiB\nport: 9100\nstore-root: /data/corpus\nwrite-back: true\n");
        ServeConfig c = ServeConfig.defaults().with(ServeConfig.readFile(file));
        assertThat(c.cacheSize()).isEqualTo(500L << 30);
        assertThat(c.port()).isEqualTo(9100);
        assertThat(c.storeRoot()).isEqualTo(Path.of("/data/corpus"));
        assertThat(c.writeBack()).isTrue();
        Files.writeString(file, "first-byte-timeout: 1500ms\n");
        assertThat(ServeConfig.defaults().with(ServeConfig.readFile(file)).firstByteTimeout()).isEqualTo(java.time.Duration.ofMillis(1500));
        assertThat(ServeConfig.defaults().with(Map.of("first-byte-timeout", "2m")).firstByteTimeout()).isEqualTo(java.time.Duration.ofMinutes(2));
        assertThatThrownBy(() -> ServeConfig.defaults().with(Map.of("first-byte-timeout", "soon"))).hasMessageContaining("10s, 500ms, 2m");
        assertThat(ServeConfig.defaults().with(Map.of("multipart-ttl", "36h")).multipartTtl()).isEqualTo(java.time.Duration.ofHours(36));
        assertThat(ServeConfig.defaults().with(Map.of("multipart-ttl", "2d")).describe()).containsEntry("multipart-ttl", "2d");
        assertThatThrownBy(() -> ServeConfig.defaults().with(Map.of("multipart-ttl", "0s")).validate()).hasMessageContaining("positive");
        assertThatThrownBy(() -> ServeConfig.defaults().with(Map.of("first-byte-timeout", "0s")).validate()).hasMessageContaining("positive");
        assertThat(ServeConfig.defaults().with(Map.of("header-timeout", "500ms")).headerTimeout()).isEqualTo(java.time.Duration.ofMillis(500));
        assertThat(ServeConfig.defaults().with(Map.of("header-timeout", "45s")).headerTimeout()).isEqualTo(java.time.Duration.ofSeconds(45));
        assertThat(ServeConfig.defaults().with(Map.of("virtual-host", "s3.example.internal, Localhost")).virtualHosts())
                .containsExactly("s3.example.internal", "localhost");
        assertThat(ServeConfig.defaults().with(Map.of("virtual-host", "")).virtualHosts()).isEmpty();
        assertThatThrownBy(() -> ServeConfig.defaults().with(Map.of("virtual-host", "http://x:9099"))).hasMessageContaining("no scheme, port");
        Files.writeString(file, "cache_size: 1GiB\n");
        assertThatThrownBy(() -> ServeConfig.readFile(file)).hasMessageContaining("unknown setting 'cache_size'");
        Files.writeString(file, "port: lots\n");
        assertThatThrownBy(() -> ServeConfig.defaults().with(ServeConfig.readFile(file))).hasMessageContaining("port must be a number");
    }

    @Test
    void bindingBeyondLoopbackNeedsCredentialsOrInsecure() {
        ServeConfig open = ServeConfig.defaults().with(Map.of("bind", "0.0.0.0"));
        assertThatThrownBy(open::validate).hasMessageContaining("configure credentials").hasMessageContaining("--insecure");
        open.with(Map.of("insecure", "true")).validate();
        open.with(Map.of("access-key", "a", "secret-key", "b")).validate();
        assertThatThrownBy(() -> ServeConfig.defaults().with(Map.of("access-key", "a")).validate())
                .hasMessageContaining("given together");
        assertThatThrownBy(() -> ServeConfig.defaults().with(Map.of("upstream", "ftp://x"))).hasMessageContaining("http:// or https://");
        ServeConfig grouped = ServeConfig.defaults().with(Map.of("group", "http://10.0.0.1:9099, http://10.0.0.2:9099"));
        assertThat(((dev.ferry.serve.membership.GroupSpec.Static) grouped.group()).members()).hasSize(2);
        grouped.with(Map.of("self", "http://10.0.0.2:9099")).validate();
        assertThatThrownBy(() -> grouped.with(Map.of("self", "http://10.0.0.3:9099")).validate()).hasMessageContaining("must be one of");
    }

    @Test
    void evictionFollowsAndScratchAreCheckedWithOneSentence() {
        ServeConfig c = ServeConfig.defaults().with(Map.of("eviction-follows", "last-report", "scratch-bucket", "tmp", "scratch-quota", "2GiB",
                "scratch-ttl", "90m"));
        c.validate();
        assertThat(c.evictionFollows()).isEqualTo("last-report");
        assertThat(c.scratchBucket()).isEqualTo("tmp");
        assertThat(c.scratchQuota()).isEqualTo(2L << 30);
        assertThat(c.scratchTtl()).isEqualTo(java.time.Duration.ofMinutes(90));
        assertThatThrownBy(() -> ServeConfig.defaults().with(Map.of("eviction-follows", "everyone")).validate())
                .hasMessage("eviction-follows must be all-jobs or last-report, not 'everyone'");
        assertThatThrownBy(() -> ServeConfig.defaults().with(Map.of("scratch-bucket", "Bad_Name")).validate())
                .hasMessageStartingWith("scratch-bucket is not a valid bucket name");
        assertThatThrownBy(() -> ServeConfig.defaults().with(Map.of("scratch-quota", "0")).validate()).hasMessageContaining("positive");
    }

    @Test
    void everyKey_isInTheDocsTable_withItsDefault() throws Exception {
        Map<String, String> documented = documentedDefaults();
        for (ServeConfig.Setting<?> s : ServeConfig.settings()) {
            String expected = s.defaultText().isEmpty() ? "(none)" : "`" + s.defaultText() + "`";
            assertThat(documented).as("docs/configuration.md, ServeConfig's table").containsEntry(s.key(), expected);
        }
        assertThat(documented.keySet()).as("rows of docs/configuration.md that are no setting").isSubsetOf(ServeConfig.KEYS);
    }

    @Test
    void aDescriptionThatNamesADefault_namesTheTables() {
        for (ServeConfig.Setting<?> s : ServeConfig.settings()) {
            assertThat(s.description()).as(s.key()).isNotBlank().doesNotContain("\n");
            if (s.description().contains("default")) {
                assertThat(s.description()).as(s.key()).contains(s.defaultText());
            }
        }
    }

    /** The {@code ServeConfig} section's table of docs/configuration.md: key to default cell (a row may name several keys). */
    private static Map<String, String> documentedDefaults() throws Exception {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.exists(dir.resolve("docs/configuration.md"))) {
            dir = dir.getParent();
            assertThat(dir).as("docs/configuration.md above the working directory").isNotNull();
        }
        List<String> lines = Files.readAllLines(dir.resolve("docs/configuration.md"));
        int start = lines.indexOf(lines.stream().filter(l -> l.startsWith("## `ServeConfig`")).findFirst().orElseThrow());
        Map<String, String> out = new LinkedHashMap<>();
        Pattern key = Pattern.compile("`([a-z-]+)`");
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("## ")) {
                break;
            }
            String[] cells = line.split("\\|");
            if (!line.startsWith("| `") || cells.length < 3) {
                continue;
            }
            for (Matcher m = key.matcher(cells[1]); m.find(); ) {
                out.put(m.group(1), cells[2].trim());
            }
        }
        return out;
    }
}
