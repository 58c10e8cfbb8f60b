package dev.ferry.embedded;

import dev.ferry.time.Clock;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import org.gaul.s3proxy.BlobStores;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.shaded.org.eclipse.jetty.server.ConnectionFactory;
import org.gaul.shaded.org.eclipse.jetty.server.Connector;
import org.gaul.shaded.org.eclipse.jetty.server.HttpConfiguration;
import org.gaul.shaded.org.eclipse.jetty.server.Server;

/**
 * A real S3-compatible server on 127.0.0.1 serving a directory: each top-level folder is a bucket. It is
 * s3proxy (its {@code filesystem-nio2} backend) behind the {@link CloudProfile}, started in-process.
 *
 * <p>It accepts any credentials (the signature is not checked): it binds to loopback only and exists for
 * demos, tests and benchmarks, not for serving data to others.
 *
 * <p>Thread-safe once started.
 */
public final class EmbeddedStore implements AutoCloseable {
    /** What the server has seen: requests, how many were refused with SlowDown, GET body bytes sent. */
    public record Stats(long requests, long slowDowns, long bytesServed) {
    }

    private final S3Proxy proxy;
    private final CloudProfileBlobStore blobStore;
    private final Path root;
    private final String host;

    private EmbeddedStore(Path root, S3Proxy proxy, CloudProfileBlobStore blobStore, String host) {
        this.host = host;
        this.root = root;
        this.proxy = proxy;
        this.blobStore = blobStore;
    }

    /**
     * Starts a server over {@code root} (created if missing) on loopback, on {@code port} (0 picks a free one),
     * paced by the real clock: what the demo, the benchmarks, the daemon's embedded origin and tests run.
     *
     * @throws IOException when the folder cannot be created or the port cannot be bound
     */
    public static EmbeddedStore start(Path root, int port, CloudProfile profile) throws IOException {
        return start(root, "127.0.0.1", port, profile, Clock.system());
    }

    /**
     * As {@link #start(Path, int, CloudProfile)}, listening on {@code host} (an address of this machine) instead
     * of loopback: a store other hosts reach, as the cluster tests' store in its own network namespace.
     * {@code clock} times the profile: bandwidth pacing, per-prefix limits, first-byte latency.
     */
    public static EmbeddedStore start(Path root, String host, int port, CloudProfile profile, Clock clock) throws IOException {
        Objects.requireNonNull(root, "root is null");
        Objects.requireNonNull(host, "host is null");
        Objects.requireNonNull(profile, "profile is null");
        Objects.requireNonNull(clock, "clock is null");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0 to 65535: " + port);
        }
        Path dir = Files.createDirectories(root.toAbsolutePath().normalize());
        Properties props = new Properties();
        props.setProperty("jclouds.filesystem.basedir", dir.toString());
        BlobStore backend = BlobStores.create("filesystem-nio2", props);
        CloudProfileBlobStore profiled = new CloudProfileBlobStore(new FolderKeyLimits(new EtagFillingBlobStore(backend)), profile, clock);
        S3Proxy proxy = S3Proxy.builder()
                .blobStore(profiled)
                .endpoint(URI.create("http://" + hostPart(host) + ":" + port))
                .awsAuthentication(AuthenticationType.NONE, null, null)
                .ignoreUnknownHeaders(true)
                .jettyMaxThreads(256)
                .build();
        try {
            parseNoFormBodies(proxy);
            proxy.start();
            for (int i = 0; i < 500 && !"STARTED".equals(proxy.getState()); i++) {
                Thread.sleep(10);
            }
        } catch (Exception e) {
            try {
                proxy.stop();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            throw new IOException("cannot start the embedded store on " + host + ":" + port + ": " + why, e);
        }
        if (!"STARTED".equals(proxy.getState())) {
            throw new IOException("the embedded store did not start on " + host + ":" + port + " (state " + proxy.getState() + ")");
        }
        return new EmbeddedStore(dir, proxy, profiled, hostPart(host));
    }

    /**
     * Why the embedded store cannot hold {@code key} (a segment longer than a file name can be), written by a
     * multipart upload if {@code multipart}, in a sentence, or null when it can: a write of such a key is
     * {@code 400 KeyTooLongError}.
     */
    public static String whyUnstorable(String key, boolean multipart) {
        return FolderKeyLimits.whyUnstorable(key, multipart);
    }

    private static String hostPart(String host) {
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    /**
     * Stops Jetty from reading a request body as HTML form fields. s3proxy asks for every query parameter
     * with {@code getParameter}, and a servlet container answers that, for a PUT or POST whose
     * {@code Content-Type} is {@code application/x-www-form-urlencoded} (what {@code curl --data-binary} and
     * urllib send), by consuming the body as form fields: the object was stored empty, or refused as
     * {@code BadDigest} or {@code IncompleteBody}. S3 stores any Content-Type as it is and never reads a body
     * as a form, so no method is a form-encoded one here. s3proxy keeps its Jetty server to itself, hence
     * the reflection; a test ({@code EmbeddedFormContentTypeTest}) fails if a new s3proxy moves it.
     */
    private static void parseNoFormBodies(S3Proxy proxy) throws IOException {
        int configured = 0;
        for (Field f : S3Proxy.class.getDeclaredFields()) {
            if (f.getType() != Server.class || Modifier.isStatic(f.getModifiers())) {
                continue; // the S3 server, and the metrics server when there is one
            }
            Server server;
            try {
                f.setAccessible(true);
                server = (Server) f.get(proxy);
            } catch (ReflectiveOperationException | RuntimeException e) {
                throw new IOException("cannot reach s3proxy's Jetty server to turn off form parsing: " + e, e);
            }
            for (Connector connector : server == null ? new Connector[0] : server.getConnectors()) {
                for (ConnectionFactory factory : connector.getConnectionFactories()) {
                    if (factory instanceof HttpConfiguration.ConnectionFactory http) {
                        http.getHttpConfiguration().setFormEncodedMethods(Set.of());
                        configured++;
                    }
                }
            }
        }
        if (configured == 0) {
            throw new IOException("cannot find s3proxy's Jetty connectors to turn off form parsing (s3proxy changed)");
        }
    }

    /** The endpoint URL clients use, e.g. {@code http://127.0.0.1:9000}. */
    public URI endpoint() {
        return URI.create("http://" + host + ":" + proxy.getPort());
    }

    public int port() {
        return proxy.getPort();
    }

    public Path root() {
        return root;
    }

    public Stats stats() {
        return blobStore.stats();
    }

    @Override
    public void close() {
        try {
            proxy.stop();
        } catch (Exception e) {
            throw new IllegalStateException("cannot stop the embedded store: " + e.getMessage(), e);
        }
    }
}
