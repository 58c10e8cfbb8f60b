package dev.ferry.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CacheVerifierTest {
    @TempDir
    Path tmp;

    @Test
    void verify_reportsAndRemovesBadBlocks_keepsGoodOnes() throws IOException {
        FileObjectStore origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        ObjectKey key = ObjectKey.of("data", "obj");
        byte[] bytes = CachingStoreTest.random(10 * 8192, 5);
        origin.put(key, PutBody.ofBytes(bytes));
        CacheConfig config = CacheConfig.of(tmp.resolve("cache"), 1 << 20).withBlockSize(8192);
        try (CachingStore cache = new CachingStore(origin, config)) {
            cache.readBytes(key, null);
            assertThatThrownBy(() -> CacheVerifier.verify(tmp.resolve("cache")))
                    .hasMessageContaining("in use by a running ferry");
        }
        CacheVerifier.Report clean = CacheVerifier.verify(tmp.resolve("cache"));
        assertThat(clean.clean()).isTrue();
        assertThat(clean.blocks()).isEqualTo(10);
        assertThat(clean.bytes()).isEqualTo(bytes.length);

        List<Path> blocks;
        try (Stream<Path> files = Files.walk(tmp.resolve("cache/blocks"))) {
            blocks = files.filter(p -> p.toString().endsWith(".blk")).sorted().toList();
        }
        CachingStoreTest.flipLastByte(blocks.get(0));
        Files.write(blocks.get(1), new byte[] {1, 2, 3}); // truncated
        CacheVerifier.Report bad = CacheVerifier.verify(tmp.resolve("cache"));
        assertThat(bad.clean()).isFalse();
        assertThat(bad.problems()).hasSize(2);
        assertThat(bad.problems()).anySatisfy(p -> assertThat(p).contains("data checksum mismatch"));
        assertThat(bad.blocks()).isEqualTo(8);
        assertThat(blocks.get(0)).doesNotExist();
        assertThat(tmp.resolve("cache/" + CacheLayout.SNAPSHOT)).doesNotExist();
        assertThat(CacheVerifier.verify(tmp.resolve("cache")).clean()).isTrue();

        try (CachingStore cache = new CachingStore(origin, config)) {
            assertThat(cache.stats().residentBlocks()).isEqualTo(8);
            assertThat(cache.readBytes(key, null)).isEqualTo(bytes);
        }
    }

    @Test
    void verify_ofSomethingElse_saysWhat() {
        assertThatThrownBy(() -> CacheVerifier.verify(tmp.resolve("nothing-here"))).hasMessageStartingWith("no cache directory at");
        assertThatThrownBy(() -> CacheVerifier.verify(tmp)).hasMessageContaining("is not a ferry cache directory");
    }
}
