package dev.ferry.cli;

import dev.ferry.s3.S3StoreConfig;
import java.net.InetAddress;
import java.net.URI;

/** How the CLI reaches a store given by URL. */
final class Stores {
    private Stores() {
    }

    /**
     * An S3-compatible endpoint: credentials from the standard chain (environment, profiles) when any are
     * set; for a loopback endpoint without any (the embedded store accepts all), placeholder ones.
     */
    static S3StoreConfig forEndpoint(URI endpoint) {
        if (endpoint.getScheme() == null || !(endpoint.getScheme().equals("http") || endpoint.getScheme().equals("https"))
                || endpoint.getHost() == null) {
            throw new UserError("--endpoint must be an http:// or https:// URL, not '" + endpoint + "'");
        }
        boolean haveCredentials = System.getenv("AWS_ACCESS_KEY_ID") != null || System.getenv("AWS_PROFILE") != null
                || System.getProperty("aws.accessKeyId") != null;
        boolean loopback;
        try {
            loopback = InetAddress.getByName(endpoint.getHost()).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            throw new UserError("--endpoint: unknown host '" + endpoint.getHost() + "'");
        }
        S3StoreConfig base = S3StoreConfig.endpoint(endpoint, "ferry", "ferry");
        if (haveCredentials || !loopback) {
            return new S3StoreConfig(endpoint, base.region(), true, null, null, base.maxConnections(), base.connectTimeout(),
                    base.socketTimeout());
        }
        return base;
    }
}
