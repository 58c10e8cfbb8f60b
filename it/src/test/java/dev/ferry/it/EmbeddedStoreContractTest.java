package dev.ferry.it;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3.S3ObjectStore;
import dev.ferry.s3.S3StoreConfig;
import dev.ferry.store.AbstractObjectStoreContractTest;
import dev.ferry.store.ObjectStore;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** S3ObjectStore against the embedded store (s3proxy) over a real socket, with parallel ranged reads in play. */
class EmbeddedStoreContractTest extends AbstractObjectStoreContractTest {
    @TempDir
    static Path root;
    static EmbeddedStore server;
    static S3ObjectStore store;

    @BeforeAll
    static void start() throws IOException {
        server = EmbeddedStore.start(root, 0, CloudProfile.none());
        // Small parts so that multi-MiB reads in the suite go out as parallel ranged GETs.
        store = new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "test", "test").withPartSize(1 << 20));
        store.createBucket("contract");
    }

    @AfterAll
    static void stop() {
        store.close();
        server.close();
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
