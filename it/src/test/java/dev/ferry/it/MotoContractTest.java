package dev.ferry.it;

import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.AbstractObjectStoreContractTest;
import dev.ferry.store.ObjectStore;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * S3ObjectStore against moto's S3 server, an implementation nobody at ferry wrote, started as its own
 * process ({@code python3 -m moto.server}). Skipped, with the reason printed, where python3 has no moto.
 */
class MotoContractTest extends AbstractObjectStoreContractTest {
    static Process moto;
    static S3ObjectStore store;

    @BeforeAll
    static void start() throws Exception {
        Path python = Servers.onPath("python3");
        boolean hasMoto = python != null
                && Servers.run(Duration.ofSeconds(60), Map.of(), python.toString(), "-c", "import moto.server, flask").exitCode() == 0;
        Servers.requireTool(hasMoto, "python3 with moto[server]");
        int port = Servers.freePort();
        Path log = Files.createTempFile("moto", ".log");
        moto = new ProcessBuilder(List.of(python.toString(), "-m", "moto.server", "-H", "127.0.0.1", "-p", Integer.toString(port)))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Servers.awaitPort(port, Duration.ofSeconds(60), moto);
        store = new S3ObjectStore(S3StoreConfig.endpoint(URI.create("http://127.0.0.1:" + port), "testing", "testing"));
        store.createBucket("contract");
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (store != null) {
            store.close();
        }
        Servers.stop(moto);
    }

    @Override
    protected ObjectStore store() {
        return store;
    }

    @Override
    protected String bucket() {
        return "contract";
    }
}
