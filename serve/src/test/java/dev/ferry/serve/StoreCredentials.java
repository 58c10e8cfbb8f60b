package dev.ferry.serve;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * For a test class whose daemon has an S3 upstream: the daemon signs its upstream requests with the standard AWS
 * credentials chain, and the embedded store takes any key, so the class's tests run with one set in the system
 * properties and cleared after them. Use with {@code @ExtendWith(StoreCredentials.class)}.
 */
public final class StoreCredentials implements BeforeAllCallback, AfterAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) {
        System.setProperty("aws.accessKeyId", "ferry");
        System.setProperty("aws.secretAccessKey", "ferry");
    }

    @Override
    public void afterAll(ExtensionContext context) {
        System.clearProperty("aws.accessKeyId");
        System.clearProperty("aws.secretAccessKey");
    }
}
