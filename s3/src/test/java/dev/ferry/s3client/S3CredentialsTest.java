package dev.ferry.s3client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/** The one decision of what ferry's S3 clients sign with, on hand-made environments. */
class S3CredentialsTest {
    private static final Map<String, String> NONE = Map.of();

    @Test
    void fromEnvironment_takesBothKeysOrLeavesItToTheChain() {
        assertThat(S3Credentials.fromEnvironment(Map.of("AWS_ACCESS_KEY_ID", "AK", "AWS_SECRET_ACCESS_KEY", "SK")::get))
                .isEqualTo(S3Credentials.of("AK", "SK"));
        assertThat(S3Credentials.fromEnvironment(Map.of("AWS_ACCESS_KEY_ID", "AK")::get)).isEqualTo(S3Credentials.DEFAULT_CHAIN);
        assertThat(S3Credentials.fromEnvironment(NONE::get).isDefaultChain()).isTrue();
    }

    @Test
    void forEndpoint_placeholdersOnlyForALoopbackEndpointWithNothingConfigured() {
        assertThat(S3Credentials.forEndpoint(true, NONE::get, NONE::get)).isEqualTo(S3Credentials.PLACEHOLDER);
        assertThat(S3Credentials.forEndpoint(false, NONE::get, NONE::get)).isEqualTo(S3Credentials.DEFAULT_CHAIN);
        assertThat(S3Credentials.forEndpoint(true, Map.of("AWS_PROFILE", "lab")::get, NONE::get)).isEqualTo(S3Credentials.DEFAULT_CHAIN);
        assertThat(S3Credentials.forEndpoint(true, Map.of("AWS_ACCESS_KEY_ID", "AK")::get, NONE::get)).isEqualTo(S3Credentials.DEFAULT_CHAIN);
        assertThat(S3Credentials.forEndpoint(true, NONE::get, Map.of("aws.accessKeyId", "AK")::get)).isEqualTo(S3Credentials.DEFAULT_CHAIN);
    }

    @Test
    void forPeer_signsWithTheDaemonsKeys_elsePlaceholders() {
        assertThat(S3Credentials.forPeer("a", "b")).isEqualTo(S3Credentials.of("a", "b"));
        assertThat(S3Credentials.forPeer(null, null)).isEqualTo(S3Credentials.PLACEHOLDER);
    }

    @Test
    void theProviderAndTheConfigFollowTheChoice() {
        assertThat(S3Credentials.of("a", "b").provider()).isInstanceOf(StaticCredentialsProvider.class);
        assertThat(S3Credentials.DEFAULT_CHAIN.provider()).isInstanceOf(DefaultCredentialsProvider.class);
        S3StoreConfig config = S3StoreConfig.endpoint(URI.create("http://127.0.0.1:9000"), S3Credentials.DEFAULT_CHAIN);
        assertThat(config.accessKeyId()).isNull();
        assertThat(config.pathStyle()).isTrue();
        assertThat(S3StoreConfig.endpoint(URI.create("http://127.0.0.1:9000"), "a", "b").credentials()).isEqualTo(S3Credentials.of("a", "b"));
        assertThatThrownBy(() -> S3Credentials.of("a", null)).hasMessageContaining("given together");
        assertThat(S3Credentials.of("a", "hunter2").toString()).contains("a").doesNotContain("hunter2");
    }
}
