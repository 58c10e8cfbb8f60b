package dev.ferry.store.file;

import dev.ferry.store.AbstractObjectStoreContractTest;
import dev.ferry.store.ObjectStore;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

class FileObjectStoreContractTest extends AbstractObjectStoreContractTest {
    @TempDir
    static Path root;
    static FileObjectStore store;

    @BeforeAll
    static void start() throws IOException {
        store = new FileObjectStore(root);
        store.createBucket("contract");
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
