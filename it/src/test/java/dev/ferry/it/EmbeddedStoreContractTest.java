package dev.ferry.it;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.AbstractObjectStoreContractTest;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.ParallelReadConfig;
import dev.ferry.store.chain.StoreChain;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The standard chain over S3ObjectStore against the embedded store (s3proxy) over a real socket, with 1 MiB
 * parts so that the suite's multi-MiB reads go out as parallel ranged GETs.
 */
class EmbeddedStoreContractTest extends AbstractObjectStoreContractTest {
    @TempDir
    static Path root;
    static EmbeddedStore server;
    static StoreChain store;

    @BeforeAll
    static void start() throws IOException {
        server = EmbeddedStore.start(root, 0, CloudProfile.none());
        store = StoreChain.over(new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "test", "test")),
                ChainConfig.DEFAULT.withParallelRead(new ParallelReadConfig(1 << 20, 4)));
        store.createBucket("contract");
    }

    @AfterAll
    static void stop() throws IOException {
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
