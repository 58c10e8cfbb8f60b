package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.s3client.S3StoreConfig;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Pins the documented defaults of the adapters (docs/configuration.md). */
class AdapterConfigDefaultsTest {
    @Test
    void s3Defaults() {
        assertThat(S3StoreConfig.aws()).isEqualTo(new S3StoreConfig(null, "us-east-1", false, null, null,
                64, Duration.ofSeconds(5), Duration.ofSeconds(30)));
        assertThat(S3StoreConfig.endpoint(java.net.URI.create("http://127.0.0.1:9000"), "a", "b").pathStyle()).isTrue();
    }

    @Test
    void cloudProfileDefaults() {
        assertThat(CloudProfile.cloud()).isEqualTo(new CloudProfile(Duration.ofMillis(30), 64L << 20, 400L << 20, 5500,
                Duration.ofMillis(100), 1));
        assertThat(CloudProfile.none().isNone()).isTrue();
        assertThat(CloudProfile.named("cloud")).isEqualTo(CloudProfile.cloud());
        assertThatThrownBy(() -> CloudProfile.named("fast")).hasMessage("unknown profile 'fast': use cloud or none");
    }

    @Test
    void s3Config_refusesHalfCredentials() {
        assertThatThrownBy(() -> new S3StoreConfig(null, "us-east-1", false, "id", null, 64,
                Duration.ofSeconds(5), Duration.ofSeconds(30))).hasMessageContaining("accessKeyId and secretAccessKey");
    }
}
