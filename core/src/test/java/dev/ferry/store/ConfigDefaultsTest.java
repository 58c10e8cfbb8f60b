package dev.ferry.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.GovernorConfig;
import dev.ferry.store.chain.ParallelReadConfig;
import dev.ferry.store.chain.RetryPolicy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Pins the documented defaults (docs/configuration.md): change one here and there together. */
class ConfigDefaultsTest {
    @Test
    void governorDefaults() {
        assertThat(GovernorConfig.DEFAULT).isEqualTo(new GovernorConfig(
                1, 5500, 1, Duration.ofMillis(100), 16, 64, 0.5, 0.7, Duration.ofSeconds(2)));
    }

    @Test
    void parallelReadAndChainDefaults() {
        assertThat(ParallelReadConfig.DEFAULT).isEqualTo(new ParallelReadConfig(8L << 20, 8,
                Math.min(256L << 20, Runtime.getRuntime().maxMemory() / 4)));
        assertThat(ChainConfig.DEFAULT).isEqualTo(new ChainConfig(ParallelReadConfig.DEFAULT, RetryPolicy.DEFAULT,
                GovernorConfig.DEFAULT, Prices.AWS_S3_STANDARD));
    }

    @Test
    void retryDefaults() {
        assertThat(RetryPolicy.DEFAULT).isEqualTo(new RetryPolicy(8, Duration.ofMillis(50), Duration.ofSeconds(5)));
    }

    @Test
    void priceDefaults_areS3StandardListPrices() {
        assertThat(Prices.AWS_S3_STANDARD).isEqualTo(new Prices(0.09, 0.0004, 0.005));
    }

    @Test
    void prefixes_takeTheFirstSegmentsOfAKey() {
        assertThat(Prefixes.of("b", "train/shard-001.tar", 1)).isEqualTo("b/train/");
        assertThat(Prefixes.of("b", "train/a/b.tar", 2)).isEqualTo("b/train/a/");
        assertThat(Prefixes.of("b", "top.tar", 1)).isEqualTo("b/");
        assertThat(Prefixes.of("b", "train/x", 0)).isEqualTo("b/");
    }

    @Test
    void badValues_areRefusedNamingTheField() {
        assertThatThrownBy(() -> new RetryPolicy(0, Duration.ZERO, Duration.ZERO)).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> ObjectKey.of("ab", "k")).hasMessageContaining("bucket name must be 3 to 63");
        assertThatThrownBy(() -> ObjectKey.of("Bucket", "k")).hasMessageContaining("lowercase");
        assertThatThrownBy(() -> ObjectKey.of("bkt", "")).hasMessage("key is empty");
        assertThatThrownBy(() -> ObjectKey.of("bkt", "a\0b")).hasMessageContaining("NUL");
        assertThatThrownBy(() -> ObjectKey.of("bkt", "x".repeat(1025))).hasMessageContaining("longer than 1024 bytes");
        assertThatThrownBy(() -> ByteRange.of(-1, 10)).hasMessageContaining("offset");
        assertThatThrownBy(() -> ByteRange.of(0, 0)).hasMessageContaining("length");
        assertThatThrownBy(() -> new ListRequest("bkt", "", null, null, 0)).hasMessageContaining("maxKeys");
        assertThatThrownBy(() -> new Prices(-1, 0, 0)).hasMessageContaining("negative");
    }

    @Test
    void byteRange_headerAndClip() {
        assertThat(ByteRange.of(0, 100).toHttpHeader()).isEqualTo("bytes=0-99");
        assertThat(ByteRange.from(10).toHttpHeader()).isEqualTo("bytes=10-");
        assertThat(ByteRange.of(90, 100).clip(100)).isEqualTo(ByteRange.of(90, 10));
        assertThat(ByteRange.of(100, 1).clip(100)).isNull();
    }

    @Test
    void cacheDefaults() {
        java.nio.file.Path dir = java.nio.file.Path.of("/tmp/c");
        assertThat(dev.ferry.cache.CacheConfig.of(dir, 1000)).isEqualTo(new dev.ferry.cache.CacheConfig(dir, 1000, 4 << 20,
                0.95, 0.90, dev.ferry.cache.VerifyMode.ON_LOAD, Duration.ofSeconds(60), 16, "lru"));
        assertThatThrownBy(() -> dev.ferry.cache.CacheConfig.of(dir, 1000).withWatermarks(0.8, 0.9)).hasMessageContaining("lowWatermark");
        assertThatThrownBy(() -> dev.ferry.cache.CacheConfig.of(dir, 1000).withBlockSize(100)).hasMessageContaining("blockSize");
    }
}
