package dev.ferry.s3client;

import java.util.function.UnaryOperator;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * What a ferry S3 client signs with: static keys, or none, meaning the SDK's default chain (environment, system
 * properties, {@code ~/.aws} profiles, container and instance roles). This is the one place that decides it:
 * {@code ferry serve --upstream} and {@code ferry mount --upstream} ({@link #fromEnvironment()}), the CLI's
 * {@code --endpoint} ({@link #forEndpoint(boolean)}), a daemon's group peers ({@link #forPeer}), clients of the
 * embedded store ({@link #PLACEHOLDER}), and {@link S3ObjectStore}, which turns the choice into the SDK's provider.
 *
 * @param accessKeyId     the access key, or null for the default chain
 * @param secretAccessKey the secret key, or null for the default chain
 */
public record S3Credentials(String accessKeyId, String secretAccessKey) {
    /** No keys: the SDK's default chain finds them. */
    public static final S3Credentials DEFAULT_CHAIN = new S3Credentials(null, null);
    /** Keys for servers that take any (the embedded store, a ferry daemon without keys, which checks no signature). */
    public static final S3Credentials PLACEHOLDER = new S3Credentials("ferry", "ferry");

    public S3Credentials {
        if ((accessKeyId == null) != (secretAccessKey == null)) {
            throw new IllegalArgumentException("accessKeyId and secretAccessKey must be given together");
        }
    }

    /** Static keys. */
    public static S3Credentials of(String accessKeyId, String secretAccessKey) {
        return new S3Credentials(accessKeyId, secretAccessKey);
    }

    /** Whether the SDK's default chain finds the keys. */
    public boolean isDefaultChain() {
        return accessKeyId == null;
    }

    /**
     * An origin named by {@code --upstream} ({@code ferry serve}, {@code ferry mount}): {@code AWS_ACCESS_KEY_ID}
     * and {@code AWS_SECRET_ACCESS_KEY} when both are set, else the default chain.
     */
    public static S3Credentials fromEnvironment() {
        return fromEnvironment(System::getenv);
    }

    static S3Credentials fromEnvironment(UnaryOperator<String> env) {
        String key = env.apply("AWS_ACCESS_KEY_ID");
        String secret = env.apply("AWS_SECRET_ACCESS_KEY");
        return key == null || secret == null ? DEFAULT_CHAIN : of(key, secret);
    }

    /**
     * A store the CLI is pointed at with {@code --endpoint}: the default chain when any credentials are configured
     * ({@code AWS_ACCESS_KEY_ID}, {@code AWS_PROFILE} or the system property {@code aws.accessKeyId}) or the
     * endpoint is not on this machine; {@link #PLACEHOLDER} for a loopback endpoint without any (the embedded store
     * takes all).
     */
    public static S3Credentials forEndpoint(boolean loopback) {
        return forEndpoint(loopback, System::getenv, System::getProperty);
    }

    static S3Credentials forEndpoint(boolean loopback, UnaryOperator<String> env, UnaryOperator<String> properties) {
        boolean configured = env.apply("AWS_ACCESS_KEY_ID") != null || env.apply("AWS_PROFILE") != null
                || properties.apply("aws.accessKeyId") != null;
        return configured || !loopback ? DEFAULT_CHAIN : PLACEHOLDER;
    }

    /**
     * Another daemon of a ferry group: signed with this daemon's keys when it has them (a group shares them),
     * else with {@link #PLACEHOLDER} (a daemon without keys checks no signature).
     */
    public static S3Credentials forPeer(String accessKey, String secretKey) {
        return of(accessKey != null ? accessKey : PLACEHOLDER.accessKeyId, secretKey != null ? secretKey : PLACEHOLDER.secretAccessKey);
    }

    /** The SDK's provider for this choice. */
    AwsCredentialsProvider provider() {
        return isDefaultChain() ? DefaultCredentialsProvider.builder().build()
                : StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKeyId, secretAccessKey));
    }

    /** Names the access key, never the secret. */
    @Override
    public String toString() {
        return isDefaultChain() ? "S3Credentials[default chain]" : "S3Credentials[" + accessKeyId + ", secret set]";
    }
}
