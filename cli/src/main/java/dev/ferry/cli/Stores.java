package dev.ferry.cli;

import dev.ferry.cli.errors.UserError;
import dev.ferry.s3client.S3Credentials;
import dev.ferry.s3client.S3StoreConfig;
import java.net.InetAddress;
import java.net.URI;

/** How the CLI reaches a store given by URL. */
final class Stores {
    private Stores() {
    }

    /** An S3-compatible endpoint, signed as {@link S3Credentials#forEndpoint(boolean)} decides. */
    static S3StoreConfig forEndpoint(URI endpoint) {
        if (endpoint.getScheme() == null || !(endpoint.getScheme().equals("http") || endpoint.getScheme().equals("https"))
                || endpoint.getHost() == null) {
            throw new UserError("--endpoint must be an http:// or https:// URL, not '" + endpoint + "'");
        }
        boolean loopback;
        try {
            loopback = InetAddress.getByName(endpoint.getHost()).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            throw new UserError("--endpoint: unknown host '" + endpoint.getHost() + "'");
        }
        return S3StoreConfig.endpoint(endpoint, S3Credentials.forEndpoint(loopback));
    }
}
