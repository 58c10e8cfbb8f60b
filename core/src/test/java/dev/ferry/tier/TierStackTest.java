package dev.ferry.tier;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.SequentialReadAhead;
import dev.ferry.cache.VerifyMode;
import dev.ferry.settings.SettingTable;
import dev.ferry.settings.Settings;
import dev.ferry.store.file.FileObjectStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one assembly of the tiers: what the settings and the builder ask for is what is stacked, in order. */
class TierStackTest {
    private static final Settings SETTINGS = SettingTable.of(TierSettings.ROWS).defaults().with(Map.of("cache-size", "64MiB",
            "block-size", "1MiB", "verify", "always", "metadata-ttl", "5s", "write-back-quota", "32MiB"));

    @Test
    void theLocalTier_takesTheTierSettings_andWriteBackSitsOnTop(@TempDir Path dir) throws Exception {
        try (ExecutorService fetchers = Executors.newVirtualThreadPerTaskExecutor();
                TierStack stack = TierStack.over(new FileObjectStore(dir.resolve("store")), SETTINGS, dir.resolve("cache"))
                        .readAhead(SequentialReadAhead.Config.DEFAULT, fetchers).writeBack(true).build()) {
            assertThat(stack.cache().config().capacity()).isEqualTo(64L << 20);
            assertThat(stack.cache().config().blockSize()).isEqualTo(1 << 20);
            assertThat(stack.cache().config().verify()).isEqualTo(VerifyMode.ALWAYS);
            assertThat(stack.cache().config().metadataTtl()).isEqualTo(Duration.ofSeconds(5));
            assertThat(stack.cache().config().policy()).isEqualTo("lru");
            assertThat(stack.readAhead()).isNotNull();
            assertThat(stack.shared()).isNull();
            assertThat(stack.group()).isNull();
            assertThat(stack.door(null).top()).isSameAs(stack.writeBack());
            assertThat(TierStack.sibling(dir.resolve("cache"), "-writeback")).isDirectory();
        }
    }

    @Test
    void withoutALocalTier_writesGoThroughToTheBoundedChain(@TempDir Path dir) throws Exception {
        try (TierStack stack = TierStack.over(new FileObjectStore(dir.resolve("store")), SETTINGS, dir.resolve("cache"))
                .localTier(false).sharedTier(dir.resolve("shared"), Duration.ofSeconds(60)).build()) {
            assertThat(stack.cache()).isNull();
            assertThat(stack.writeBack()).isNull();
            assertThat(stack.belowCache()).isSameAs(stack.shared());
            assertThat(stack.door(null).top()).isSameAs(stack.shared());
        }
    }
}
